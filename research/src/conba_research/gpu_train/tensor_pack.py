"""Float16 tensors in as few bytes as lzma makes them, optionally against a reference of the same shapes.

Why not safetensors + xz: a float16 weight's two bytes differ in kind (sign, exponent and high mantissa
against the low mantissa); split into two byte planes, lzma models each (MiniLM's encoder layers, 21.3 MB
in float16: 19.2 MB as one xz stream, 18.2 MB in planes). Against a reference tensor of the same name
and shape (the untuned layers against the shipped default's tuned ones; a trained checkpoint against the
untuned base it started from), each weight is stored as its distance from the reference weight in
float16 steps (units in the last place, zigzag-coded so that small distances of either sign are small
numbers): the high plane is then mostly zero (on two of MiniLM's layers: 4.25 MB, against 4.51 MB for
the XOR of the bit patterns and 7.1 MB raw). Decoding is bit-exact, and a sha256 per tensor in the
header checks it. Tensors that are not float16 (MiniLM's int64 ``position_ids``) are stored as their raw
bytes.

File layout: ``CONBATP1``, the header's length (8 bytes, little-endian), the header (JSON), the lzma
stream of the payload (all high-byte planes, then all low-byte planes, then the raw tensors).
"""

from __future__ import annotations

import hashlib
import json
import lzma
from pathlib import Path

import numpy as np
import torch

from conba.errors import FormatError

MAGIC = b"CONBATP1"


def _sha(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:16]


def _bits(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().cpu().contiguous().numpy().view(np.uint16).ravel()


def _ordered(bits: np.ndarray) -> np.ndarray:
    """float16 bit patterns as integers in the order of their values (-inf ... -0, +0 ... +inf)."""
    return np.where(bits & 0x8000, ~bits & 0xFFFF, bits | 0x8000).astype(np.int32)


def _bits_of(ordered: np.ndarray) -> np.ndarray:
    return np.where(ordered & 0x8000, ordered & 0x7FFF, ~ordered & 0xFFFF).astype(np.uint16)


def _distance(bits: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Zigzag-coded signed distance in float16 steps (0, -1, 1, -2, ... -> 0, 1, 2, 3, ...)."""
    d = ((_ordered(bits) - _ordered(ref) + 0x8000) & 0xFFFF) - 0x8000  # modulo 2**16, in [-32768, 32767]
    return (((d << 1) ^ (d >> 31)) & 0xFFFF).astype(np.uint16)


def _undistance(code: np.ndarray, ref: np.ndarray) -> np.ndarray:
    code = code.astype(np.int32)
    d = (code >> 1) ^ -(code & 1)
    return _bits_of((_ordered(ref) + d) & 0xFFFF)


def encode(tensors: dict[str, torch.Tensor], reference: dict[str, torch.Tensor] | None = None,
           preset: int = 6) -> bytes:
    """The packed bytes of ``tensors`` (float16 ones as their distance from ``reference``'s same-name,
    same-shape float16 tensor where there is one)."""
    reference = reference or {}
    entries, high, low, raw = [], [], [], []
    for name, tensor in tensors.items():
        tensor = tensor.detach().cpu().contiguous()
        entry = {"name": name, "shape": list(tensor.shape), "dtype": str(tensor.dtype).removeprefix("torch.")}
        if tensor.dtype == torch.float16:
            bits = _bits(tensor)
            entry["sha256"] = _sha(bits)
            ref = reference.get(name)
            if ref is not None and ref.dtype == torch.float16 and tuple(ref.shape) == tuple(tensor.shape):
                bits = _distance(bits, _bits(ref))
                entry["delta"] = True
            high.append((bits >> 8).astype(np.uint8))
            low.append((bits & 0xFF).astype(np.uint8))
        else:
            data = tensor.numpy().tobytes()
            entry.update(sha256=hashlib.sha256(data).hexdigest()[:16], bytes=len(data))
            raw.append(data)
        entries.append(entry)
    payload = b"".join(a.tobytes() for a in high) + b"".join(a.tobytes() for a in low) + b"".join(raw)
    header = json.dumps({"tensors": entries}).encode()
    return MAGIC + len(header).to_bytes(8, "little") + header + lzma.compress(payload, preset=preset)


def read_header(data: bytes, where: str = "packed tensors") -> tuple[dict, int]:
    """The header and the payload's offset (FormatError for anything else)."""
    if data[:8] != MAGIC or len(data) < 16:
        raise FormatError(f"{where}: not a conba tensor pack")
    size = int.from_bytes(data[8:16], "little")
    try:
        return json.loads(data[16:16 + size]), 16 + size
    except ValueError as exc:
        raise FormatError(f"{where}: corrupt header ({exc})") from None


def decode(data: bytes, reference: dict[str, torch.Tensor] | None = None,
           where: str = "packed tensors") -> dict[str, torch.Tensor]:
    """The tensors :func:`encode` packed (the same ``reference`` needed for the ones stored against it), checked
    against their sha256 (FormatError naming the tensor)."""
    reference = reference or {}
    header, offset = read_header(data, where)
    try:
        payload = lzma.decompress(data[offset:])
    except lzma.LZMAError as exc:
        raise FormatError(f"{where}: corrupt payload ({exc})") from None
    halves = [e for e in header["tensors"] if e["dtype"] == "float16"]
    total = sum(int(np.prod(e["shape"], dtype=np.int64)) for e in halves)
    high = np.frombuffer(payload, np.uint8, total, 0).astype(np.uint16)
    low = np.frombuffer(payload, np.uint8, total, total).astype(np.uint16)
    pos, raw_pos, out = 0, 2 * total, {}
    for entry in header["tensors"]:
        name, shape = entry["name"], entry["shape"]
        if entry["dtype"] == "float16":
            n = int(np.prod(shape, dtype=np.int64))
            bits = (high[pos:pos + n] << 8) | low[pos:pos + n]
            pos += n
            if entry.get("delta"):
                ref = reference.get(name)
                if ref is None or list(ref.shape) != shape or ref.dtype != torch.float16:
                    raise FormatError(f"{where}: tensor {name} needs its float16 reference {shape}")
                bits = _undistance(bits, _bits(ref))
            if _sha(bits) != entry["sha256"]:
                raise FormatError(f"{where}: tensor {name} does not match its checksum (wrong reference?)")
            out[name] = torch.from_numpy(bits.astype(np.uint16).view(np.float16).reshape(shape).copy())
        else:
            chunk = payload[raw_pos:raw_pos + entry["bytes"]]
            raw_pos += entry["bytes"]
            if hashlib.sha256(chunk).hexdigest()[:16] != entry["sha256"]:
                raise FormatError(f"{where}: tensor {name} does not match its checksum")
            dtype = getattr(torch, entry["dtype"])
            out[name] = torch.frombuffer(bytearray(chunk), dtype=dtype).reshape(shape).clone()
    return out


def write(path: str | Path, tensors: dict[str, torch.Tensor], reference: dict[str, torch.Tensor] | None = None,
          preset: int = 6) -> int:
    """:func:`encode` into ``path`` (atomically); returns its size in bytes."""
    from conba.utils.io import atomic_write

    data = encode(tensors, reference, preset)
    atomic_write(path, lambda tmp: tmp.write_bytes(data))
    return len(data)


def read(path: str | Path, reference: dict[str, torch.Tensor] | None = None) -> dict[str, torch.Tensor]:
    return decode(Path(path).read_bytes(), reference, where=str(path))
