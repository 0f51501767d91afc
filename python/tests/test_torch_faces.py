"""One Python face: wham.X, wham.torch_ops.X and the registered torch.ops.wham.X take the
same arguments in the same order, options keyword-only. Needs no GPU and no libwham.so;
the torch.ops checks need PyTorch 2.4+ (skipped without it)."""

import inspect

import pytest

import wham

# The array arguments of each operator, in order; everything after them is keyword-only.
ARRAYS = {
    "fwht": ["x"],
    "hadamard": ["x"],
    "iqp_encode": ["params"],
    "m2l": ["multipoles", "deltas"],
    "m2l_accumulate": ["multipoles", "deltas", "src", "tgt", "locals"],
    "m2l_accumulate_centers": ["multipoles", "centers", "src", "tgt", "locals"],
    "m2l_accumulate_classes": ["multipoles", "class_deltas", "cls", "src", "tgt", "locals"],
    "m2m": ["multipoles", "deltas"],
    "l2l": ["locals", "deltas"],
    "m2m_accumulate": ["multipoles", "deltas", "src", "tgt", "parents"],
    "l2l_accumulate": ["locals", "deltas", "src", "tgt", "children"],
    "p2m": ["points", "charges", "cell_offsets", "centers"],
    "l2p": ["locals", "centers", "cell_offsets", "points", "potential", "gradient"],
    "p2p": ["points", "charges", "cell_offsets", "near_offsets", "near_cells", "potential",
            "gradient"],
}
# The operators that add into arguments, and those arguments (the registered operator
# declares them mutated and returns nothing).
MUTATED = {"m2l_accumulate": ["locals"], "m2l_accumulate_centers": ["locals"],
           "m2l_accumulate_classes": ["locals"], "m2m_accumulate": ["parents"],
           "l2l_accumulate": ["children"], "l2p": ["potential", "gradient"],
           "p2p": ["potential", "gradient"]}
KW = inspect.Parameter.KEYWORD_ONLY


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_options_after_the_arrays_are_keyword_only(name):
    parameters = inspect.signature(getattr(wham, name)).parameters.values()
    assert [p.name for p in parameters if p.kind is not KW] == ARRAYS[name]
    assert all(p.default is not inspect.Parameter.empty for p in parameters if p.kind is KW)


def test_positional_options_are_refused(fake):
    with pytest.raises(TypeError, match="positional"):
        wham.fwht(fake((4, 8), "float32"), 0.5)
    with pytest.raises(TypeError, match="positional"):
        wham.iqp_encode(fake((4, 3), "float32"), 2)


def test_accumulate_forms_return_locals(stub, fake):
    m, d = fake((4, 9), "complex128"), fake((6, 3), "float64")
    s, t, l = fake((6,), "int32"), fake((6,), "int32"), fake((5, 9), "complex128")
    assert wham.m2l_accumulate(m, d, s, t, l, p=2) is l
    assert wham.m2l_accumulate_centers(m, fake((5, 3), "float64"), s, t, l) is l
    assert wham.m2l_accumulate_classes(m, fake((3, 3), "float64"), fake((6,), "int32"), s, t,
                                       l, grouped=True) is l


def test_fmm_forms_return_what_they_add_into(stub, fake):
    m, d = fake((4, 9), "complex64"), fake((6, 3), "float32")
    s, t, l = fake((6,), "int32"), fake((6,), "int32"), fake((5, 9), "complex64")
    assert wham.m2m_accumulate(m, d, s, t, l) is l
    assert wham.l2l_accumulate(m, d, s, t, l, p=2) is l
    x, off, c = fake((10, 3), "float32"), fake((5,), "int64"), fake((4, 3), "float32")
    phi, grad = fake((10,), "float32"), fake((10, 3), "float32")
    L = fake((4, 9), "complex64")
    result = wham.l2p(L, c, off, x, phi, grad)
    assert result[0] is phi and result[1] is grad
    result = wham.p2p(x, fake((10,), "float32"), off, fake((5,), "int64"), fake((8,), "int32"),
                      phi)
    assert result[0] is phi and result[1] is None


@pytest.mark.parametrize("matrices,m", [("quarot", 40), ("QuaRot", 40), ("QUAROT", 40),
                                        ("fast_hadamard_transform", 20),
                                        ("FAST_HADAMARD_TRANSFORM", 20)])
def test_hadamard_factor_ignores_the_case_of_matrices(matrices, m):
    # 5120 = 40 * 2^7 = 20 * 2^8: QuaRot's matrices take H_40, the others H_20.
    assert wham.hadamard_factor(5120, matrices=matrices) == (m, (5120 // m).bit_length() - 1)


def _torch_ops():
    torch = pytest.importorskip("torch")
    if not hasattr(torch.library, "custom_op"):
        pytest.skip("torch.library.custom_op needs PyTorch 2.4 or newer")
    import wham.torch_ops
    return torch, wham.torch_ops


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_torch_ops_face_is_the_wham_face(name):
    _, wt = _torch_ops()
    assert getattr(wt, name) is getattr(wham, name)


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_registered_operator_takes_the_public_arguments(name):
    torch, _ = _torch_ops()
    schema = getattr(torch.ops.wham, name).default._schema
    public = [p for p in inspect.signature(getattr(wham, name)).parameters.values()
              if p.name != "out"]  # a registered operator has no out=
    assert [(a.name, a.kwarg_only) for a in schema.arguments] == \
        [(p.name, p.kind is KW) for p in public]
    for a, p in zip(schema.arguments, public):
        if p.default is not inspect.Parameter.empty:
            assert a.default_value == p.default, (name, a.name)
    # A mutating operator may not return its mutated input: torch.ops returns nothing there,
    # the public function returns what it added into.
    assert len(schema.returns) == (0 if name in MUTATED else 1)
    assert [a.name for a in schema.arguments if a.alias_info is not None
            and a.alias_info.is_write] == MUTATED.get(name, [])
