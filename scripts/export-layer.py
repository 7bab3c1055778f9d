#!/usr/bin/python3
"""Writes attention layers of your own model, with the hidden states that enter them, to a
safetensors file that `attnviz import FILE -o SESSION.json` opens with no further options.

It runs the model on a sentence, captures the input of each chosen layer's attention block with a
forward hook, and stores the layers' weights under their own names, the hidden states (n × d_model)
entering each, the token strings and the head counts in the file's metadata. Needs PyTorch
(Debian: python3-torch); for Hugging Face models also the transformers package.

  export-layer.py --model gpt2 --layer 5 --text "The cat sat on the mat" -o gpt2-layer5.safetensors
  export-layer.py --model bert-base-uncased --layer 0 --text "Attention is all you need" -o bert0.safetensors
  export-layer.py --torch-demo --layer 1 --text "a b c d" -o demo.safetensors   (nn.TransformerEncoder,
                                                                                random weights)
  export-layer.py --model gpt2 --layer all -o gpt2.safetensors   (every layer; also 2-5 or 0,3,7)

One layer's hidden states are stored as X; several layers' as X.L each (the input of layer L),
which `attnviz import FILE --layer all -o DIR` and the model view read per layer.
With --check, it also stores PyTorch's output of the attention block as "reference.output" (one
layer) or "reference.output.L" (several), so the import can be compared with it.
"""
import re
import argparse
import json
import struct
import sys

try:
    import torch
except ImportError:
    sys.exit("export-layer.py needs PyTorch: sudo apt-get install python3-torch")

DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.float64: "F64"}


def write_safetensors(path, tensors, metadata):
    header, blobs, offset = {"__metadata__": metadata}, [], 0
    for name, t in tensors.items():
        t = t.detach().cpu().contiguous()
        if t.dtype not in DTYPES:
            t = t.to(torch.float32)
        blob = t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


BLOCK = re.compile(r"(?:^|\.)(?:layers\.(\d+)\.self_attn|layer\.(\d+)\.attention|h\.(\d+)\.attn)$")


def attention_modules(model):
    """Every attention block of the model by layer: {L: (state-dict prefix of its weights, module)}."""
    blocks = {}
    for name, module in model.named_modules():
        m = BLOCK.search(name)
        if m:
            blocks.setdefault(int(next(g for g in m.groups() if g is not None)), (name, module))
    return blocks


def chosen_layers(spec, blocks):
    """The layers --layer names: one number, all, a range 2-5 or a list 0,3,7 (ascending)."""
    if spec == "all":
        return sorted(blocks)
    chosen = set()
    for item in spec.split(","):
        a, _, b = item.strip().partition("-")
        if not a.isdigit() or (b and not b.isdigit()):
            sys.exit(f"--layer: {item!r} is not a layer (expected all, 3, 2-5 or 0,3,7)")
        chosen.update(range(int(a), int(b or a) + 1))
    missing = sorted(chosen - set(blocks))
    if missing:
        sys.exit(f"no attention block of layer {missing[0]} found (the model has layers {sorted(blocks)}; looked "
                 f"for layers.L.self_attn, layer.L.attention, h.L.attn)")
    return sorted(chosen)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="a Hugging Face model name or directory (needs transformers)")
    ap.add_argument("--torch-demo", action="store_true", help="a 2-layer nn.TransformerEncoder, random weights")
    ap.add_argument("--layer", default="0", help="a layer, or several: all, 2-5, 0,3,7 (default 0)")
    ap.add_argument("--text", default="The cat sat on the mat")
    ap.add_argument("--check", action="store_true", help="also store the block's output as reference.output")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    torch.manual_seed(0)

    captured = {}
    if args.torch_demo:
        d_model, heads = 16, 4
        enc = torch.nn.TransformerEncoder(
            torch.nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=32, dropout=0.0, batch_first=True), 2)
        enc.eval()
        tokens = args.text.split()
        embed = torch.nn.Embedding(1000, d_model)
        ids = torch.tensor([[hash(t) % 1000 for t in tokens]])
        model, inputs, meta = enc, {"src": embed(ids)}, {"num_attention_heads": str(heads)}
    else:
        try:
            from transformers import AutoModel, AutoTokenizer
        except ImportError:
            sys.exit("--model needs the transformers package (pip install transformers), or use --torch-demo")
        tokenizer = AutoTokenizer.from_pretrained(args.model)
        model = AutoModel.from_pretrained(args.model, torch_dtype=torch.float32)
        model.eval()
        inputs = tokenizer(args.text, return_tensors="pt")
        tokens = tokenizer.convert_ids_to_tokens(inputs["input_ids"][0])
        c = model.config
        meta = {}
        for key in ("num_attention_heads", "n_head", "num_key_value_heads", "rope_theta"):
            if getattr(c, key, None) is not None:
                meta[key] = str(getattr(c, key))

    blocks = attention_modules(model)
    layers = chosen_layers(args.layer, blocks)
    several = len(layers) > 1 or not args.layer.isdigit()

    def hooks(layer, block):
        def pre_hook(module, a, kw):
            x = a[0] if a else kw.get("hidden_states", kw.get("query"))
            captured[("X", layer)] = x[0].detach().to(torch.float64)

        def post_hook(module, a, kw, out):
            captured[("output", layer)] = (out[0] if isinstance(out, tuple) else out)[0].detach().to(torch.float64)

        try:  # keyword arguments reach hooks from PyTorch 2.0 on (Llama passes hidden_states by keyword)
            block.register_forward_pre_hook(pre_hook, with_kwargs=True)
            block.register_forward_hook(post_hook, with_kwargs=True)
        except TypeError:
            block.register_forward_pre_hook(lambda m, a: pre_hook(m, a, {}))
            block.register_forward_hook(lambda m, a, out: post_hook(m, a, {}, out))

    for layer in layers:
        hooks(layer, blocks[layer][1])
    # With gradients on, nn.TransformerEncoder does not take its fused fast path, which would skip
    # the attention module (and the hooks).
    model(**inputs)
    tensors = {}
    for layer in layers:
        prefix = blocks[layer][0]
        if ("X", layer) not in captured:
            sys.exit(f"the attention block of layer {layer} was not called")
        tensors.update({name: t for name, t in model.state_dict().items() if name.startswith(prefix + ".")})
        suffix = f".{layer}" if several else ""
        tensors["X" + suffix] = captured[("X", layer)]
        if args.check and ("output", layer) in captured:
            tensors["reference.output" + suffix] = captured[("output", layer)]
    meta["tokens"] = json.dumps(tokens)
    meta["layer"] = str(layers[0])  # what `attnviz import FILE` imports without --layer
    if several:
        meta["layers"] = json.dumps(layers)
    write_safetensors(args.output, tensors, meta)
    shape = tuple(captured[("X", layers[0])].shape)
    if several:
        print(f"wrote {args.output}: {len(tensors)} tensors of layers {layers}, X.L {shape} for each; "
              f"next: attnviz import {args.output} --layer all -o layers/")
    else:
        print(f"wrote {args.output}: {len(tensors)} tensors of {blocks[layers[0]][0]}, X {shape}; "
              f"next: attnviz import {args.output} -o layer.json")


if __name__ == "__main__":
    main()
