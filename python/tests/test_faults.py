"""Faults from the fault backend reach Python as typed exceptions."""

import json

FAULT = {"XAL_BACKENDS": "fault:mock"}


def test_out_of_memory_fault_carries_status_and_message(py):
    out = py("""
        import json, xal
        dev = xal.devices()[0]
        try:
            xal.Buffer(dev, 4096)
        except xal.OutOfMemory as e:
            print(json.dumps({"status": e.status, "name": e.status_name, "op": e.operation,
                              "backend": e.backend, "message": e.message}))
        b = xal.Buffer(dev, 4096)  # nth(1): only the first allocation fails
        print(len(b))
    """, {**FAULT, "XAL_FAULTS": "mem_alloc=nth(1)OUT_OF_MEMORY"})
    first, second = out.strip().splitlines()
    detail = json.loads(first)
    assert detail["status"] == -4 and detail["name"] == "XAL_ERROR_OUT_OF_MEMORY"
    assert detail["op"] == "xal_mem_alloc"
    assert detail["backend"].startswith("fault")
    assert "mem_alloc" in detail["message"]
    assert second == "4096"


def test_vendor_code_of_a_cuda_profile_error(py):
    out = py("""
        import xal
        dev = xal.devices()[0]
        b = xal.Buffer(dev, 64)
        try:
            b.memset(1)
        except xal.DeviceLost as e:
            print(e.vendor_code, e.vendor_name, e.status)
        print(dev.health().state)
        try:
            b.to_bytes()
        except xal.DeviceLost:
            print("sticky")
        dev.reset()
        print(dev.health().state)
        print(xal.Buffer(dev, 8).memset(2).to_bytes() == bytes([2] * 8))
    """, {**FAULT, "XAL_FAULTS": "memset=nth(1)cuda:CUDA_ERROR_ILLEGAL_ADDRESS"})
    assert out.split() == ["700", "CUDA_ERROR_ILLEGAL_ADDRESS", "-10", "LOST", "sticky",
                           "OK", "True"]


def test_fault_control_from_python(py):
    out = py("""
        import xal
        from xal import fault
        dev = xal.devices()[0]
        fault.load_plan("memcpy_htod=nth(2)TIMEOUT")
        b = xal.Buffer(dev, 16)
        b.copy_from(b"x" * 16)
        try:
            b.copy_from(b"y" * 16)
        except xal.Timeout as e:
            print("timeout", isinstance(e, TimeoutError))
        rules = fault.rules()
        print(len(rules), rules[0].fired, rules[0].matched)
        fault.set_rule_enabled(rules[0].name, False)
        fault.clear()
        print(len(fault.rules()), fault.counters().injected)
        try:
            fault.load_plan("mem_alloc=garbage(")
        except xal.InvalidArgument:
            print("bad plan")
    """, FAULT)
    assert out.split() == ["timeout", "True", "1", "1", "2", "0", "1", "bad", "plan"]


def test_collective_timeout_fault(py):
    out = py("""
        import numpy as np, xal
        comms = xal.comm_create(xal.devices()[:2], timeout_ms=200)
        bufs = [xal.Buffer(d, 16).view("float32") for d in comms.devices]
        try:
            comms.allreduce(bufs)
        except xal.Timeout as e:
            print("timeout", e.status)
        comms.close()
    """, {**FAULT, "XAL_FAULTS": "allreduce=nth(1)hang"})
    assert out.split() == ["timeout", "-12"]


def test_fault_control_without_the_fault_backend(py):
    out = py("""
        import xal
        try:
            xal.fault.rules()
        except xal.BackendUnavailable as e:
            print("unavailable", e.status)
    """)
    assert out.split() == ["unavailable", "-8"]
