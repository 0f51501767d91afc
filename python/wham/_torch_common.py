"""What wham's PyTorch operator modules (torch_ops, _torch_fmm) share: the memory a
registered operator hands to the library, dtype checks of fake implementations, the test
for eager execution of the mutating operators, and the "wham" library fragment."""

import torch

Tensor = torch.Tensor


def _contiguous(t):
    """t as the memory wham reads: lazy conjugate/negative views materialised (the library
    reads the data pointer, which such views do not change), C-contiguous."""
    t = t.resolve_conj().resolve_neg()
    return t if t.is_contiguous() else t.contiguous()


def _check_dtype(function, name, t, allowed):
    dtype = str(t.dtype)[6:]
    if dtype not in allowed:
        raise TypeError(f"wham.{function}: {name} has dtype {dtype}; expected "
                        + " or ".join(allowed))


def _static(n):
    """n when it is a plain int (not a symbolic size under dynamic shapes), else None."""
    return n if isinstance(n, int) else None


def _eager(tensors):
    """Plain tensors and no tracing mode: the accumulate operators may write through the
    data pointer. Anything else (FakeTensor, FunctionalTensor, a proxy or schema-check
    mode) gets the out-of-place operator and a copy_, which every tracer understands."""
    for t in tensors:
        if type(t) is not torch.Tensor and type(t) is not torch.nn.Parameter:
            return False
    depth = getattr(torch._C, "_len_torch_dispatch_stack", None)
    return depth is None or depth() == 0


# The mutating operators are defined by schema in this fragment (their functional forms
# through torch.library.custom_op).
_library = torch.library.Library("wham", "FRAGMENT")
