"""A BERT encoder in plain torch that loads the sentence-transformers MiniLM safetensors as is,
with mean pooling and a small regression head (no transformers package)."""

from __future__ import annotations

import json
import math
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812 - torch's own convention
from torch import nn

from gpurack_trainer.args import Shape
from gpurack_trainer.errors import InputError


class Layer(nn.Module):
    def __init__(self, hidden: int, heads: int, intermediate: int, eps: float) -> None:
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden, eps=eps)
        self.inter = nn.Linear(hidden, intermediate)
        self.out = nn.Linear(intermediate, hidden)
        self.out_norm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        b, t, h = x.shape

        def heads(y: torch.Tensor) -> torch.Tensor:
            return y.view(b, t, self.heads, h // self.heads).transpose(1, 2)

        a = F.scaled_dot_product_attention(
            heads(self.query(x)), heads(self.key(x)), heads(self.value(x)), bias
        )
        x = self.attn_norm(x + self.attn_out(a.transpose(1, 2).reshape(b, t, h)))
        return self.out_norm(x + self.out(F.gelu(self.inter(x))))


class Regressor(nn.Module):
    """Encoder, mean pooling over the unmasked tokens, then Linear-GELU-Linear to one value."""

    def __init__(self, vocab: int, shape: Shape, max_pos: int = 512, eps: float = 1e-12) -> None:
        super().__init__()
        self.word = nn.Embedding(vocab, shape.hidden)
        self.pos = nn.Embedding(max_pos, shape.hidden)
        self.segment = nn.Embedding(2, shape.hidden)
        self.emb_norm = nn.LayerNorm(shape.hidden, eps=eps)
        self.layers = nn.ModuleList(
            Layer(shape.hidden, shape.heads, shape.intermediate, eps) for _ in range(shape.layers)
        )
        self.head = nn.Sequential(nn.Linear(shape.hidden, 128), nn.GELU(), nn.Linear(128, 1))

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        t = ids.shape[1]
        x = self.word(ids) + self.pos.weight[:t] + self.segment.weight[0]
        x = self.emb_norm(x)
        # Additive bias: 0 where attended, a large negative where padded (float, the dtype of x).
        bias = ((1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min).to(x.dtype)
        for layer in self.layers:
            x = layer(x, bias)
        m = mask[:, :, None].to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp(min=1.0)
        return self.head(pooled).squeeze(-1)


def shape_from_config(raw: bytes) -> tuple[int, Shape, int, float]:
    """Vocabulary size, encoder shape, max positions and LayerNorm epsilon from a BERT config.json.

    Raises:
        InputError: for a config that is not a BERT one.
    """
    try:
        c = json.loads(raw)
        shape = Shape(
            int(c["num_hidden_layers"]),
            int(c["hidden_size"]),
            int(c["num_attention_heads"]),
            int(c["intermediate_size"]),
        )
        return (
            int(c["vocab_size"]),
            shape,
            int(c.get("max_position_embeddings", 512)),
            float(c.get("layer_norm_eps", 1e-12)),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"config.json is not a BERT config: {exc}") from None


def _hf_name(ours: str) -> str:
    """Our parameter name -> the name in a BertModel state dict."""
    fixed = {
        "word.weight": "embeddings.word_embeddings.weight",
        "pos.weight": "embeddings.position_embeddings.weight",
        "segment.weight": "embeddings.token_type_embeddings.weight",
        "emb_norm.weight": "embeddings.LayerNorm.weight",
        "emb_norm.bias": "embeddings.LayerNorm.bias",
    }
    if ours in fixed:
        return fixed[ours]
    _, n, sub, kind = ours.split(".")
    part = {
        "query": "attention.self.query",
        "key": "attention.self.key",
        "value": "attention.self.value",
        "attn_out": "attention.output.dense",
        "attn_norm": "attention.output.LayerNorm",
        "inter": "intermediate.dense",
        "out": "output.dense",
        "out_norm": "output.LayerNorm",
    }[sub]
    return f"encoder.layer.{n}.{part}.{kind}"


def load_pretrained(model: Regressor, tensors: dict[str, Any]) -> int:
    """Copy the encoder weights from a BertModel state dict (the head stays random); returns the count.

    Raises:
        InputError: for a missing tensor or one of another shape.
    """
    loaded = 0
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.startswith("head."):
                continue
            src = tensors.get(_hf_name(name))
            if src is None:
                src = tensors.get("bert." + _hf_name(name))
            if src is None or tuple(src.shape) != tuple(param.shape):
                raise InputError(f"weights lack {_hf_name(name)} of shape {tuple(param.shape)}")
            param.copy_(src.to(param.dtype))
            loaded += 1
    return loaded


def init_random(model: Regressor, seed: int) -> None:
    """BERT's initialisation (normal, std 0.02), for a model of a shape without pretrained weights."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.startswith("head."):
                continue
            if p.dim() > 1:
                p.copy_(torch.randn(p.shape, generator=gen) * 0.02)
            elif name.endswith("norm.weight"):
                p.fill_(1.0)
            else:
                p.zero_()


def parameter_count(model: nn.Module) -> int:
    return sum(math.prod(p.shape) for p in model.parameters())
