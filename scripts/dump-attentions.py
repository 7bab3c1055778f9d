#!/usr/bin/python3
"""Writes a model's attention weights on a text for attnviz: one safetensors file holding the
stacked weights "attentions" (layers × 1 × heads × q × k, as torch.stack(outputs.attentions)
gives them) and the tokens in its metadata entry "tokens" (a JSON list).

  dump-attentions.py --model NAME_OR_FOLDER --text "The cat sat." -o cat.safetensors
      a Hugging Face model run with output_attentions=True (needs the transformers package)
  dump-attentions.py --torch-demo --text "the cat sat on the mat" -o demo.safetensors
      a 2-layer nn.TransformerEncoder with random weights, its nn.MultiheadAttention layers'
      weights caught as they run (what the same code does for any nn.Module built of them)

Needs PyTorch (Debian: python3-torch).
"""
import argparse
import json
import struct
import sys

try:
    import torch
except ImportError:
    sys.exit("dump-attentions.py needs PyTorch: sudo apt-get install python3-torch")


def write_safetensors(path, attentions, tokens):
    """attentions: layers × 1 × heads × q × k, written as F32 with the tokens as metadata."""
    data = attentions.detach().to(torch.float32).contiguous().numpy().tobytes()
    header = {"__metadata__": {"tokens": json.dumps(tokens), "format": "pt"},
              "attentions": {"dtype": "F32", "shape": list(attentions.shape), "data_offsets": [0, len(data)]}}
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def caught_attentions(model, run):
    """Runs `run()` with every nn.MultiheadAttention of `model` asked for its per-head weights, and
    returns them in the order the layers ran: a list of 1 × heads × q × k tensors."""
    caught, originals = [], []
    for module in model.modules():
        if isinstance(module, torch.nn.MultiheadAttention):
            original = module.forward

            def forward(*args, _original=original, **kwargs):
                kwargs["need_weights"] = True
                kwargs["average_attn_weights"] = False
                out, weights = _original(*args, **kwargs)
                caught.append(weights)
                return out, weights

            originals.append((module, original))
            module.forward = forward
    try:
        with torch.no_grad():
            run()
    finally:
        for module, original in originals:
            module.forward = original
    return caught


def torch_demo(text):
    """A 2-layer encoder (d_model 16, 4 heads) on the text's words, random weights and embeddings."""
    torch.manual_seed(0)
    tokens = text.split()
    layer = torch.nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, dropout=0.0, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=2)
    model.train()  # with dropout 0 the same numbers, and PyTorch's fused inference path (which skips the layers) is off
    x = torch.randn(1, len(tokens), 16)
    caught = caught_attentions(model, lambda: model(x))
    return torch.stack(caught), tokens


def hugging_face(name, text):
    try:
        from transformers import AutoModel, AutoTokenizer
    except ImportError:
        sys.exit("--model needs the transformers package (pip install transformers); --torch-demo does not")
    tokenizer = AutoTokenizer.from_pretrained(name)
    model = AutoModel.from_pretrained(name, output_attentions=True, attn_implementation="eager")
    model.eval()
    encoded = tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        out = model(**encoded)
    tokens = tokenizer.convert_ids_to_tokens(encoded["input_ids"][0])
    return torch.stack(out.attentions), tokens


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = ap.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="a Hugging Face model name or folder")
    source.add_argument("--torch-demo", action="store_true", help="a 2-layer nn.TransformerEncoder, random weights")
    ap.add_argument("--text", required=True)
    ap.add_argument("-o", "--output", required=True, help="the .safetensors file to write")
    args = ap.parse_args()
    attentions, tokens = torch_demo(args.text) if args.torch_demo else hugging_face(args.model, args.text)
    write_safetensors(args.output, attentions, tokens)
    layers, _, heads, q, k = attentions.shape
    print(f"wrote {args.output}: {layers} layers × {heads} heads × {q} × {k}, tokens {tokens}")


if __name__ == "__main__":
    main()
