"""Backends, devices and their properties, metrics, health and memory."""

import json
import subprocess
import sys
import uuid

import pytest

import xal


def test_backends_lists_the_mock_loaded():
    bs = xal.backends()
    assert [b.name for b in bs] == ["mock"]
    b = bs[0]
    assert b.loaded and b.state == "LOADED"
    assert b.status == 0 and b.status_name == "XAL_SUCCESS"
    assert b.device_count == 4
    assert b.simulated and not b.wrapper
    assert b.path.endswith("libxal_backend_mock.so")
    assert b.abi_version[0] == 1


def test_abi_version_is_1_x():
    major, minor = xal.abi_version()
    assert major == 1 and minor >= 1


def test_device_properties(devs):
    assert [d.index for d in devs] == [0, 1, 2, 3]
    d = devs[0]
    assert "A100" in d.name
    assert d.vendor == "NVIDIA"
    assert d.backend == "mock"
    assert d.backend_index == 0
    assert d.kind == "GPU"
    assert isinstance(d.uuid, uuid.UUID)
    assert len({x.uuid for x in devs}) == 4
    assert d.memory_bytes == 40 * 2**30
    assert d.max_allocation_bytes > 0
    assert d.compute_units == 108
    assert d.core_clock_mhz > 0 and d.memory_clock_mhz > 0
    assert d.memory_bus_width_bits == 5120
    assert d.peak_memory_bandwidth_gbps == pytest.approx(1555.0)
    assert {"simulated", "collectives", "mem_import", "host_pointers"} <= d.capabilities
    assert d.capability_bits & (1 << 7)
    assert d.parent_index is None
    assert d.simulated and d.host_visible
    assert d.__dlpack_device__() == (1, 0)
    p = d.properties
    assert p["name"] == d.name and p["uuid"] == str(d.uuid) and p["kind"] == "GPU"


def test_device_equality_and_repr(devs):
    assert xal.device(1) == devs[1]
    assert xal.device(1) != devs[0]
    assert len({xal.device(2), devs[2]}) == 1
    assert "A100" in repr(devs[0]) and "mock" in repr(devs[0])


def test_device_index_out_of_range_raises():
    with pytest.raises(xal.InvalidArgument) as e:
        xal.device(99)
    assert e.value.operation == "xal_device_get"


def test_mem_info_tracks_allocations(dev):
    free0, total = dev.mem_info()
    assert total == dev.memory_bytes and free0 <= total
    with xal.Buffer(dev, 1 << 20):
        free1, _ = dev.mem_info()
        assert free1 <= free0 - (1 << 20)
    assert dev.mem_info().free == free0


def test_metrics(dev):
    before = dev.metrics()
    with xal.Buffer(dev, 4096) as b:
        b.memset(7)
        m = dev.metrics()
    assert m.simulated
    assert m.xal_alloc_count_current == before.xal_alloc_count_current + 1
    assert m.xal_alloc_bytes_current >= before.xal_alloc_bytes_current + 4096
    assert m.health == "OK"
    assert m.memory_total_bytes == dev.memory_bytes
    assert isinstance(m.xal_errors, dict)


def test_health_ok(dev):
    h = dev.health()
    assert h.state == "OK"
    assert h.sticky_status == 0 and h.sticky_status_name == "XAL_SUCCESS"


def test_memory_limit_makes_alloc_fail_with_out_of_memory(devs):
    d = devs[3]
    d.set_memory_limit(1 << 20)
    try:
        assert d.mem_info().total == 1 << 20
        with xal.Buffer(d, 512 << 10):
            with pytest.raises(xal.OutOfMemory) as e:
                xal.Buffer(d, 768 << 10)
        assert e.value.status == -4
        assert e.value.status_name == "XAL_ERROR_OUT_OF_MEMORY"
        assert isinstance(e.value, MemoryError)
    finally:
        d.set_memory_limit(0)
    assert d.mem_info().total == d.memory_bytes


def test_synchronize_and_compute_share(dev):
    dev.synchronize()
    assert dev.compute_share == 100


def test_partitions_in_a_fresh_process(py):
    out = py("""
        import xal
        card = xal.devices()[1]
        parts = card.partition([(8 << 30, 50), 4 << 30])
        assert [p.parent_index for p in parts] == [1, 1]
        assert parts[0].mem_info().total == 8 << 30
        assert parts[0].compute_share == 50
        assert card.partitions() == parts
        with xal.Buffer(parts[1], 1024) as b:
            b.memset(1)
        card.unpartition()
        assert card.partitions() == []
        print("ok", len(xal.devices()))
    """, {"XAL_MOCK_DEVICES": "2*a100-40g"})
    assert out.split() == ["ok", "2"]


def test_python_m_xal_prints_inventory():
    r = subprocess.run([sys.executable, "-m", "xal"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("xal ABI 1.")
    assert "Backends: 1" in r.stdout and "[0] mock  LOADED" in r.stdout
    assert "Devices: 4" in r.stdout
    assert "memory free/total" in r.stdout and "capabilities" in r.stdout


def test_python_m_xal_json_and_bad_backend():
    r = subprocess.run([sys.executable, "-m", "xal", "--json"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    inv = json.loads(r.stdout)
    assert inv["backends"][0]["name"] == "mock"
    assert len(inv["devices"]) == 4
    assert inv["devices"][0]["memory_total_bytes"] == 40 * 2**30
    assert "simulated" in inv["devices"][0]["capabilities"]
    r = subprocess.run([sys.executable, "-m", "xal", "--backend", "/nonexistent/x.so"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "FAILED" in r.stdout or "UNAVAILABLE" in r.stdout
