"""How arrays reach a call, without a GPU: the stream a DLPack producer is asked for, how long
its tensor is held, the device a call runs on, conjugated/negated PyTorch views, pinned
host memory and JAX device ordinals. Fake arrays (made-up pointers), fake PyTorch tensors,
and a fake CUDA driver stand in for the real ones; the library is the stub."""

import pytest

import wham
from wham import _arrays, _dlpack, _frameworks


# ---- a fake CUDA driver -----------------------------------------------------------------

class FakeDriver:
    """_frameworks._Driver's methods over Python state: contexts pushed, events recorded
    (complete only once `finish()` is called), pointer attributes from a table."""

    def __init__(self, current=0, pointers=None):
        self.current = current
        self.pointers = dict(pointers or {})  # ptr -> (memory type, managed, ordinal)
        self.pushed = []
        self.log = []
        self.events = {}  # handle -> complete
        self.capture = False
        self._next = 1

    def current_device(self):
        return self.pushed[-1] if self.pushed else self.current

    def push_primary(self, ordinal):
        self.pushed.append(ordinal)
        self.log.append(("push", ordinal))
        return ordinal

    def pop_primary(self, token):
        assert self.pushed.pop() == token
        self.log.append(("pop", token))

    def synchronize(self, stream):
        self.log.append(("sync", stream))

    def stream_wait(self, waiter, producer):
        self.log.append(("wait", waiter, producer))

    def capturing(self, stream):
        return self.capture

    def record_event(self, stream):
        event, self._next = self._next, self._next + 1
        self.events[event] = False
        self.log.append(("record", stream, self.current_device()))
        return event

    def event_done(self, event):
        return self.events[event]

    def destroy_event(self, event):
        del self.events[event]

    def relax_capture_mode(self):
        return 0

    def restore_capture_mode(self, mode):
        pass

    def pointer_info(self, ptr):
        return self.pointers.get(ptr, (0, False, None))

    def finish(self):
        for event in self.events:
            self.events[event] = True


@pytest.fixture
def driver(monkeypatch):
    d = FakeDriver()
    monkeypatch.setattr(_frameworks, "_driver", d)
    monkeypatch.setattr(_frameworks, "_pending", [], raising=False)
    return d


DEVICE, HOST, MANAGED = (2, False), (1, False), (2, True)


def _on(driver, array, kind, ordinal=0):
    driver.pointers[array.ptr] = kind + (ordinal,)
    return array


# ---- DLPack: the consumer's stream ------------------------------------------------------

def test_dlpack_stream_argument_names_the_call_stream():
    cs = _dlpack.consumer_stream
    assert cs(_dlpack.KDL_CUDA, 0) == 1            # the default (legacy) stream
    assert cs(_dlpack.KDL_CUDA, 1) == 1            # the legacy stream's handle
    assert cs(_dlpack.KDL_CUDA, 2) == 2            # the per-thread default stream's handle
    assert cs(_dlpack.KDL_CUDA, 0x7f00aa00) == 0x7f00aa00
    assert cs(_dlpack.KDL_CUDA_MANAGED, 0) == 1
    assert cs(_dlpack.KDL_CPU, 0x7f00aa00) is None  # no streams on these
    assert cs(_dlpack.KDL_CUDA_HOST, 0) is None
    assert cs(None, 5) is None


def test_dlpack_input_is_taken_with_the_call_stream(stub, driver, fake, fake_dlpack):
    # A DLPack-only first argument: the call runs on the legacy default stream.
    x = fake_dlpack((2, 8), "float32")
    wham.fwht(x, out=fake((2, 8), "float32"))
    assert x.streams == [1]
    # A later argument: the call runs on the first argument's stream, so the producer is
    # asked again for that one (the first view is handed back at once).
    m = fake((5, 9), "complex128", stream=0x5000)
    d = fake_dlpack((5, 3), "float64", ptr=0x7e0000100000)
    wham.m2l(m, d, out=fake((5, 9), "complex128"))
    assert d.streams == [1, 0x5000] and d.deleted == 1
    assert "wham_m2l_f64" in stub.last()
    driver.finish()
    _frameworks.release_finished()
    assert d.deleted == 2


def test_dlpack_out_is_taken_with_the_call_stream(stub, driver, fake, fake_dlpack):
    out = fake_dlpack((2, 8), "float32")
    wham.fwht(fake((2, 8), "float32", stream=0x6000), out=out)
    assert out.streams == [0x6000]


# ---- DLPack: the tensor is held until the work that reads it is done ----------------------

def test_dlpack_tensor_is_held_until_its_work_is_done(stub, driver, fake, fake_dlpack):
    x = fake_dlpack((2, 8), "float32")
    out = fake_dlpack((2, 8), "float32", ptr=0x7e0000200000)
    wham.fwht(x, out=out)
    assert x.deleted == 0 and out.deleted == 0            # the work may still be running
    assert [e for e in driver.log if e[0] == "record"] == [("record", 0, 0)]
    assert _frameworks.release_finished() == 1            # not complete: still held
    assert x.deleted == 0 and out.deleted == 0
    driver.finish()
    assert _frameworks.release_finished() == 0
    assert x.deleted == 1 and out.deleted == 1 and not driver.events


def test_a_later_call_releases_finished_work(stub, driver, fake, fake_dlpack):
    x = fake_dlpack((2, 8), "float32")
    wham.fwht(x, out=fake((2, 8), "float32"))
    driver.finish()
    assert x.deleted == 0
    wham.fwht(fake((2, 8), "float32"), out=fake((2, 8), "float32"))
    assert x.deleted == 1


def test_nothing_is_held_under_stream_capture(stub, driver, fake, fake_dlpack):
    driver.capture = True
    x = fake_dlpack((2, 8), "float32")
    wham.fwht(x, out=fake((2, 8), "float32"))
    assert x.deleted == 1 and not driver.events


def test_a_refused_dlpack_argument_is_handed_back(stub, driver, fake, fake_dlpack):
    x = fake_dlpack((2, 8), "float32", strides=(16, 2))
    with pytest.raises(ValueError, match="C-contiguous"):
        wham.fwht(x, out=fake((2, 8), "float32"))
    assert x.deleted == 1 and not driver.events


# ---- the device a call runs on ------------------------------------------------------------

def test_dlpack_array_runs_on_its_own_device(stub, driver, fake, fake_dlpack):
    x = fake_dlpack((2, 8), "float32", device=(2, 1))
    out = _on(driver, fake((2, 8), "float32"), DEVICE, 1)
    wham.fwht(x, out=out)
    assert ("push", 1) in driver.log and driver.log[-1] == ("pop", 1)
    assert ("record", 0, 1) in driver.log      # the event in the device's context
    assert driver.current_device() == 0          # the caller's context again


def test_no_context_switch_on_the_current_device(stub, driver, fake, fake_dlpack):
    wham.fwht(fake_dlpack((2, 8), "float32", device=(2, 0)), out=fake((2, 8), "float32"))
    assert not [e for e in driver.log if e[0] in ("push", "pop")]


def test_cuda_array_interface_device_is_the_pointers(driver, fake):
    a = _on(driver, fake((4,), "float32"), DEVICE, 3)
    assert _arrays.inspect(a, "fwht", "x").device == 3
    assert _arrays.inspect(_on(driver, fake((4,), "float32"), MANAGED, 0), "fwht", "x").device is None
    assert _arrays.inspect(_on(driver, fake((4,), "float32"), HOST, 0), "fwht", "x").device is None
    assert _arrays.inspect(fake((4,), "float32"), "fwht", "x").device is None  # unknown pointer


def test_cuda_array_interface_array_runs_on_its_device(stub, driver, fake):
    x = _on(driver, fake((2, 8), "float32"), DEVICE, 2)
    out = _on(driver, fake((2, 8), "float32"), DEVICE, 2)
    wham.fwht(x, out=out)
    assert driver.log[0] == ("push", 2) and driver.log[-1] == ("pop", 2)


def test_arrays_on_different_devices_are_refused(stub, driver, fake, fake_dlpack):
    x = fake_dlpack((2, 8), "float32", device=(2, 1))
    with pytest.raises(ValueError, match="different devices"):
        wham.fwht(x, out=_on(driver, fake((2, 8), "float32"), DEVICE, 0))
    m = _on(driver, fake((5, 9), "complex128"), DEVICE, 0)
    with pytest.raises(ValueError, match="different devices: multipoles on cuda:0, deltas on cuda:1"):
        wham.m2l(m, fake_dlpack((5, 3), "float64", device=(2, 1)))
    assert driver.current_device() == 0 and not driver.pushed


def test_pinned_first_argument_runs_on_the_others_device(stub, driver, fake):
    x = _on(driver, fake((2, 8), "float32"), HOST)
    out = _on(driver, fake((2, 8), "float32"), DEVICE, 1)
    with pytest.raises(ValueError, match="out on cuda:1, the call's other arrays on cuda:0"):
        wham.fwht(x, out=out)  # x says nothing: the call runs on the current device, 0
    driver.current = 1
    wham.fwht(x, out=out)
    m = _on(driver, fake((5, 9), "complex128"), MANAGED)
    d = _on(driver, fake((5, 3), "float64"), DEVICE, 2)
    wham.m2l(m, d, out=fake((5, 9), "complex128"))
    assert ("push", 2) in driver.log


# ---- JAX device ordinals ----------------------------------------------------------------

class _JaxDevice:
    def __init__(self, **attributes):
        self.__dict__.update(attributes)


class FakeJaxArray:
    def __init__(self, device):
        self._device = device
        self.__cuda_array_interface__ = {"shape": (4,), "typestr": "<f4",
                                         "data": (0x7c0000000000, False), "version": 3}

    def devices(self):
        return {self._device}


FakeJaxArray.__module__ = "jaxlib.xla_extension"


def test_jax_device_ordinal_zero_is_ordinal_zero():
    # One GPU a process: every rank's GPU is its local ordinal 0, whatever its global id.
    a = FakeJaxArray(_JaxDevice(local_hardware_id=0, id=3))
    assert _arrays.inspect(a, "fwht", "x").device == 0
    assert _arrays.inspect(FakeJaxArray(_JaxDevice(local_hardware_id=1, id=5)), "fwht", "x").device == 1
    assert _arrays.inspect(FakeJaxArray(_JaxDevice(id=2)), "fwht", "x").device == 2


# ---- PyTorch conjugated / negated views and pinned tensors ----------------------------------

class _TorchDevice:
    def __init__(self, type, index=None):
        self.type, self.index = type, index


class _TorchDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name


class FakeTensor:
    """What wham reads of a torch.Tensor; resolve_conj()/resolve_neg() return new fakes."""

    _next = 0x7d0000000000

    def __init__(self, shape, dtype="complex64", device=("cuda", 0), conj=False, neg=False,
                 pinned=False):
        self.shape, self.dtype = tuple(shape), _TorchDtype(dtype)
        self.device = _TorchDevice(*device)
        self.conj, self.neg, self.pinned = conj, neg, pinned
        self.ptr = FakeTensor._next
        FakeTensor._next += 1 << 32
        self.copies = []

    def data_ptr(self):
        return self.ptr

    def is_contiguous(self):
        return True

    def is_pinned(self):
        return self.pinned

    def is_conj(self):
        return self.conj

    def is_neg(self):
        return self.neg

    def _copy(self, conj, neg):
        c = FakeTensor(self.shape, self.dtype.name, (self.device.type, self.device.index),
                       conj, neg, self.pinned)
        self.copies.append(c)
        return c

    def resolve_conj(self):
        return self._copy(False, self.neg) if self.conj else self

    def resolve_neg(self):
        return self._copy(self.conj, False) if self.neg else self


FakeTensor.__module__ = "torch"


@pytest.fixture
def torch_stream(monkeypatch):
    monkeypatch.setattr(_arrays, "_torch_current_stream", lambda device: 0x4400 + device,
                        raising=False)


@pytest.mark.parametrize("bit", ["conj", "neg", "both"])
def test_conjugated_or_negated_input_is_read_through_a_copy(torch_stream, bit):
    x = FakeTensor((2, 8), "complex64", ("cuda", 1), conj=bit != "neg", neg=bit != "conj")
    a = _arrays.inspect(x, "fwht", "x")
    copy = x
    while copy.copies:  # conj and neg: resolve_conj() then resolve_neg() of that
        copy = copy.copies[-1]
    assert not copy.conj and not copy.neg
    assert a.ptr == copy.ptr != x.ptr
    assert a.obj is copy and a.keep is copy    # alive until the work is done
    assert a.stream == 0x4401 and a.device == 1  # the copy is written on that stream
    assert a.resolved == ("negated" if bit == "neg" else "conjugated")


def test_plain_tensor_is_read_in_place(torch_stream):
    x = FakeTensor((2, 8))
    a = _arrays.inspect(x, "fwht", "x")
    assert a.ptr == x.ptr and a.keep is None and a.resolved is None and not x.copies


@pytest.mark.parametrize("bit,query", [("conj", r"conjugated view \(is_conj\(\) is True\)"),
                                       ("neg", r"negated view \(is_neg\(\) is True\)")])
def test_conjugated_or_negated_output_is_refused(torch_stream, bit, query):
    y = FakeTensor((2, 8), conj=bit == "conj", neg=bit == "neg")
    with pytest.raises(ValueError, match="wham.fwht: out is a " + query):
        _arrays.inspect(y, "fwht", "out", writable=True)
    assert not y.copies
    # Read as an input, then written (out=x in place): check_writable refuses the copy.
    a = _arrays.inspect(y, "fwht", "x")
    with pytest.raises(ValueError, match="x is a " + query + " and would be written"):
        _arrays.check_writable("fwht", a)


def test_conjugated_out_is_refused_by_the_operators(stub, driver, torch_stream, fake):
    with pytest.raises(ValueError, match="out is a conjugated view"):
        wham.fwht(fake((2, 8), "complex64"), out=FakeTensor((2, 8), "complex64", conj=True))
    m = fake((4, 9), "complex128")
    with pytest.raises(ValueError, match="locals is a conjugated view"):
        wham.m2l_accumulate(m, fake((6, 3), "float64"), fake((6,), "int32"), fake((6,), "int32"),
                            FakeTensor((4, 9), "complex128", conj=True))
    with pytest.raises(ValueError, match="out is a negated view"):
        wham.m2l(m, fake((4, 3), "float64"), out=FakeTensor((4, 9), "complex128", neg=True))


def test_pinned_host_tensor_is_accepted(torch_stream):
    x = FakeTensor((2, 8), "float32", ("cpu",), pinned=True)
    a = _arrays.inspect(x, "fwht", "x")
    assert a.ptr == x.ptr and a.device is None  # every device reads it
    with pytest.raises(ValueError, match="must be in CUDA device memory.*cpu device"):
        _arrays.inspect(FakeTensor((2, 8), "float32", ("cpu",)), "fwht", "x")
    with pytest.raises(ValueError, match="conjugated view of pinned host memory"):
        _arrays.inspect(FakeTensor((2, 8), "complex64", ("cpu",), conj=True, pinned=True),
                        "fwht", "x")


def test_pinned_host_dlpack_array_is_accepted(driver, fake_dlpack):
    x = fake_dlpack((2, 8), "float32", device=(1, 0), ptr=0x7b0000000000)  # NumPy over pinned memory
    driver.pointers[x.ptr] = HOST + (0,)
    a = _arrays.inspect(x, "fwht", "x")
    assert a.ptr == x.ptr and a.device is None and x.streams == [None]
    pageable = fake_dlpack((2, 8), "float32", device=(1, 0), ptr=0x7b0100000000)
    with pytest.raises(ValueError, match="CPU device"):
        _arrays.inspect(pageable, "fwht", "x")
    assert pageable.deleted == 1


def test_tensor_subclass_from_elsewhere_is_read_as_a_tensor(torch_stream):
    tensor = type("Tensor", (), {"__module__": "torch"})  # stands for torch.Tensor
    user_tensor = type("UserTensor", (FakeTensor, tensor), {
        "__module__": "user_library",
        # what torch's interface would say: the raw memory, blind to the conjugate bit
        "__cuda_array_interface__": property(lambda self: {
            "shape": self.shape, "typestr": "<c8", "data": (self.ptr, False), "version": 2})})
    x = user_tensor((2, 8), "complex64", conj=True)
    a = _arrays.inspect(x, "fwht", "x")
    assert a.framework == "torch" and a.resolved == "conjugated" and a.ptr != x.ptr
