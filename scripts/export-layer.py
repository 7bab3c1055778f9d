#!/usr/bin/python3
"""Writes one attention layer of your own model, with the hidden states that enter it, to a
safetensors file that `attnviz import FILE -o SESSION.json` opens with no further options.

It runs the model on a sentence, captures the input of layer L's attention block with a forward
hook, and stores the layer's weights under their own names, X (n × d_model), the token strings and
the head counts in the file's metadata. Needs PyTorch (Debian: python3-torch); for Hugging Face
models also the transformers package.

  export-layer.py --model gpt2 --layer 5 --text "The cat sat on the mat" -o gpt2-layer5.safetensors
  export-layer.py --model bert-base-uncased --layer 0 --text "Attention is all you need" -o bert0.safetensors
  export-layer.py --torch-demo --layer 1 --text "a b c d" -o demo.safetensors   (nn.TransformerEncoder,
                                                                                random weights)
With --check, it also stores PyTorch's output of the attention block as "reference.output", so
the import can be compared with it.
"""
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


def attention_module(model, layer):
    """The attention block of layer `layer` and the state-dict prefix of its weights."""
    for name, module in model.named_modules():
        for pattern in (f"layers.{layer}.self_attn", f"layer.{layer}.attention", f"h.{layer}.attn"):
            if name.endswith(pattern):
                return name, module
    sys.exit(f"no attention block of layer {layer} found (looked for layers.{layer}.self_attn, "
             f"layer.{layer}.attention, h.{layer}.attn)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="a Hugging Face model name or directory (needs transformers)")
    ap.add_argument("--torch-demo", action="store_true", help="a 2-layer nn.TransformerEncoder, random weights")
    ap.add_argument("--layer", type=int, default=0)
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

    prefix, block = attention_module(model, args.layer)

    def pre_hook(module, a, kw):
        x = a[0] if a else kw.get("hidden_states", kw.get("query"))
        captured["X"] = x[0].detach().to(torch.float64)

    def post_hook(module, a, kw, out):
        captured["output"] = (out[0] if isinstance(out, tuple) else out)[0].detach().to(torch.float64)

    try:  # keyword arguments reach hooks from PyTorch 2.0 on (Llama passes hidden_states by keyword)
        block.register_forward_pre_hook(pre_hook, with_kwargs=True)
        block.register_forward_hook(post_hook, with_kwargs=True)
    except TypeError:
        block.register_forward_pre_hook(lambda m, a: pre_hook(m, a, {}))
        block.register_forward_hook(lambda m, a, out: post_hook(m, a, {}, out))
    # With gradients on, nn.TransformerEncoder does not take its fused fast path, which would skip
    # the attention module (and the hooks).
    model(**inputs)
    if "X" not in captured:
        sys.exit("the attention block was not called")
    tensors = {name: t for name, t in model.state_dict().items() if name.startswith(prefix + ".")}
    tensors["X"] = captured["X"]
    if args.check and "output" in captured:
        tensors["reference.output"] = captured["output"]
    meta["tokens"] = json.dumps(tokens)
    meta["layer"] = str(args.layer)
    write_safetensors(args.output, tensors, meta)
    print(f"wrote {args.output}: {len(tensors)} tensors of {prefix}, X {tuple(captured['X'].shape)}; "
          f"next: attnviz import {args.output} -o layer.json")


if __name__ == "__main__":
    main()
