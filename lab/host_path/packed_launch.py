"""Packed launch: a plan's recorded Triton launches handed to cuLaunchKernelEx from C++ (lab).

The prototype of the `decode-host-path` record's Q2. `kernels/decode_attention/launcher.py`
records once what Triton hands to its compiled launcher and replays that call with new
tensors; the launcher then parses some forty Python arguments, asks every tensor for its
pointer through a Python method call and `cuPointerGetAttribute`, and launches. Here the
same recording is turned into one parameter word per kernel parameter, laid out by the
rules of Triton 3.6's launcher (`triton/backends/nvidia/driver.py`, `make_launcher`): one
word per parameter that is not a constexpr, pointers as device addresses, integers and
floats packed to their declared width, then the global and profile scratch pointers. A call
writes the tensors' data pointers into their slots and launches every kernel of the plan
with `cuLaunchKernelEx` on the current stream (`packed_launch.cpp`, built with torch's
extension tools on first use).

What is refused, so that the replay serves instead: a kernel whose recording is not the
replay's (no direct launch), a signature with tuples or tensor descriptors, a kernel that
needs global or profile scratch memory (Triton allocates it per launch), clusters
(`num_ctas` > 1), and any argument that does not fit its declared type.

Nothing here is imported by `kernels/`; `install()` patches `launcher.KernelLaunch` in the
measuring process only.
"""

from __future__ import annotations

import struct
from pathlib import Path

from kernels.decode_attention import launcher

SOURCE = Path(__file__).with_name("packed_launch.cpp")

_INTEGERS = {"i1": "<b", "i8": "<b", "i16": "<h", "i32": "<i", "i64": "<q",
             "u1": "<B", "u8": "<B", "u16": "<H", "u32": "<I", "u64": "<Q"}
_FLOATS = {"fp16": "<e", "fp32": "<f", "f32": "<f", "fp64": "<d"}

_extension = None
ENABLED = {"packed": True}


class Refused(Exception):
    """The recording cannot be packed; the caller keeps the replay."""


def extension():
    """The compiled `packed_launch.cpp` module (built once per process, cached by torch)."""
    global _extension
    if _extension is None:
        from torch.utils.cpp_extension import load

        _extension = load(name="design_gates_packed_launch", sources=[str(SOURCE)], with_cuda=True,
                          extra_cflags=["-O2"], verbose=False)
    return _extension


def parameter_word(kind: str, value) -> int:
    """The 8-byte word Triton's launcher passes for a parameter of type `kind` (little-endian, zero-extended)."""
    if kind.startswith("*"):
        if value is None:
            return 0
        return value if isinstance(value, int) else int(value.data_ptr())
    if kind in _INTEGERS:
        raw = struct.pack(_INTEGERS[kind], int(value))
    elif kind == "bf16":  # Triton truncates the fp32 bits
        raw = struct.pack("<f", float(value))[2:]
    elif kind in _FLOATS:
        raw = struct.pack(_FLOATS[kind], float(value))
    else:
        raise Refused(f"parameter type {kind!r}")
    return int.from_bytes(raw.ljust(8, b"\0"), "little")


def _closure(fn) -> dict:
    return {name: cell.cell_contents for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ())}


def _compiled_for(kernel, function):
    for caches in getattr(kernel, "device_caches", {}).values():
        for compiled in caches[0].values():
            if getattr(compiled, "function", None) == function:
                return compiled
    raise Refused("no compiled kernel with the recorded function handle")


def kernel_spec(kernel_launch) -> dict:
    """The packed form of a `KernelLaunch`'s recorded direct launch (raises `Refused`)."""
    if kernel_launch.direct is None:
        raise Refused("no recorded direct launch")
    recorded = _closure(kernel_launch.direct)
    template, slots, run = recorded["template"], recorded["slots"], recorded["run"]
    num_warps, num_ctas, shared = recorded["packed"]
    compiled = _compiled_for(kernel_launch.kernel, recorded["function"])
    signature = list(compiled.src.signature.values())
    if len(signature) != len(template):
        raise Refused(f"{len(template)} recorded arguments for {len(signature)} signature entries")
    if num_ctas != 1:
        raise Refused("clusters")
    if getattr(run, "global_scratch_size", 0) or getattr(run, "profile_scratch_size", 0):
        raise Refused("scratch memory allocated per launch")
    tensor_at = dict(slots)
    words, slot_words, index = [], [], {}
    for position, (kind, value) in enumerate(zip(signature, template)):
        if not isinstance(kind, str) or kind.startswith("tensordesc"):
            raise Refused(f"parameter type {kind!r}")
        if kind == "constexpr":
            continue
        index[position] = len(words)
        if position in tensor_at:
            slot_words.append((len(words), tensor_at[position]))
            words.append(0)
        else:
            try:
                words.append(parameter_word(kind, value))
            except (struct.error, TypeError, ValueError) as exc:
                raise Refused(f"argument {position} ({kind}): {exc}") from None
    words += [0, 0]  # global and profile scratch: none
    return {"function": int(recorded["function"]),
            "grid": [int(recorded["g0"]), int(recorded["g1"]), int(recorded["g2"])],
            "num_warps": int(num_warps), "shared": int(shared), "pdl": bool(getattr(run, "launch_pdl", False)),
            "cooperative": bool(getattr(run, "launch_cooperative_grid", False)),
            "words": words, "slots": slot_words,
            "expected": [(index[pos], tensor) for pos, tensor in slots]}


def packed_call(kernel_launches, tensors):
    """One `PackedCall` launching `kernel_launches` in order, built for `tensors` (raises `Refused`)."""
    specs = []
    for kl in kernel_launches:
        spec = kernel_spec(kl)
        spec.pop("expected")
        specs.append(spec)
    return extension().PackedCall(specs, list(tensors))


def install() -> None:
    """Route every `KernelLaunch` call of this process through its packed launch once it has one."""
    if getattr(launcher.KernelLaunch, "_packed_installed", False):
        return
    original = launcher.KernelLaunch.__call__

    def call(self, tensors):
        packed = self.__dict__.get("_packed")
        if packed is not None and ENABLED["packed"] and not launcher.launch_hooks_installed():
            if packed(tensors, False):  # admitted upstream: the plan key or the guard
                return
        original(self, tensors)
        if "_packed" not in self.__dict__ and self.direct is not None:
            try:
                self._packed = packed_call([self], tensors)
            except Refused as exc:
                self._packed = None
                self._packed_refusal = str(exc)

    launcher.KernelLaunch.__call__ = call
    launcher.KernelLaunch._packed_installed = True


def path_of(kernel_launch) -> str:
    """Which launch a `KernelLaunch` takes now: packed, replay or triton."""
    if kernel_launch.__dict__.get("_packed") is not None and ENABLED["packed"]:
        return "packed"
    return "replay" if kernel_launch.is_direct else "triton"
