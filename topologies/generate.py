#!/usr/bin/env python3
"""Writes the hand-designed test topologies of this folder (this_vm.json is `strata-info --topo`
output instead). Run from anywhere: python3 topologies/generate.py. The output is the canonical form
strata-info --topo writes, so a load-and-dump round trip leaves these files unchanged."""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def num(x):
    return json.dumps(x)


def dump(graph):
    """The canonical layout of src/topology/topology_json.cc (TopologyToJson)."""
    out = ['{', '  "strata_topology": 1,']
    for key in ("source", "description"):
        if graph.get(key):
            out.append('  "%s": %s,' % (key, json.dumps(graph[key])))
    links = dict(DEFAULT_LINKS)
    for cls, params in graph.get("links", {}).items():
        links[cls] = dict(links[cls], **params)
    out.append('  "links": {')
    classes = list(DEFAULT_LINKS)
    for i, cls in enumerate(classes):
        p = links[cls]
        out.append('    "%s": {"latency_us": %s, "bandwidth_gbs": %s}%s' % (
            cls, fmt(p["latency_us"]), fmt(p["bandwidth_gbs"]), "," if i + 1 < len(classes) else ""))
    out.append('  },')
    out.append('  "hosts": [')
    for hi, h in enumerate(graph["hosts"]):
        out.append('    {')
        out.append('      "id": %s,' % json.dumps(h["id"]))
        out.append('      "numa_nodes": [')
        for i, n in enumerate(h["numa_nodes"]):
            cores = ", ".join(json.dumps(c) for c in n["cores"])
            out.append('        {"os_index": %d, "package": %d, "memory_mb": %d, "cores": [%s]}%s' % (
                n["os_index"], n["package"], n["memory_mb"], cores, "," if i + 1 < len(h["numa_nodes"]) else ""))
        out.append('      ],')
        items = []
        for g in h.get("gpus", []):
            s = '{"name": %s, "pci": %s, "numa": %d' % (json.dumps(g["name"]), json.dumps(g["pci"]), g["numa"])
            for k in ("vendor", "device", "model"):
                if g.get(k):
                    s += ', "%s": %s' % (k, json.dumps(g[k]))
            items.append(s + "}")
        out.append(block("gpus", items))
        items = []
        for n in h.get("nics", []):
            s = '{"name": %s' % json.dumps(n["name"])
            if n.get("pci"):
                s += ', "pci": %s' % json.dumps(n["pci"])
            s += ', "numa": %d, "speed_mbps": %d' % (n["numa"], n["speed_mbps"])
            for k in ("type", "rdma"):
                if n.get(k):
                    s += ', "%s": %s' % (k, json.dumps(n[k]))
            items.append(s + "}")
        out.append(block("nics", items))
        items = ['{"gpus": [%s, %s], "count": %d}' % (json.dumps(a), json.dumps(b), c) for a, b, c in h.get("nvlinks", [])]
        out.append(block("nvlinks", items, last=True))
        out.append('    }' + ("," if hi + 1 < len(graph["hosts"]) else ""))
    out.append('  ]')
    out.append('}')
    return "\n".join(out) + "\n"


def block(key, items, last=False):
    end = "" if last else ","
    if not items:
        return '      "%s": []%s' % (key, end)
    body = ",\n".join("        " + i for i in items)
    return '      "%s": [\n%s\n      ]%s' % (key, body, end)


def fmt(x):
    return str(int(x)) if float(x).is_integer() else repr(float(x))


DEFAULT_LINKS = {
    "same_numa": {"latency_us": 0.5, "bandwidth_gbs": 8},
    "cross_numa": {"latency_us": 1, "bandwidth_gbs": 6},
    "pcie": {"latency_us": 2, "bandwidth_gbs": 24},
    "nvlink": {"latency_us": 1.5, "bandwidth_gbs": 25},
    "network": {"latency_us": 25, "bandwidth_gbs": 1.25},
}


def cores(first, count, threads_apart=None):
    if threads_apart is None:
        return [str(c) for c in range(first, first + count)]
    return ["%d,%d" % (c, c + threads_apart) for c in range(first, first + count)]


def two_socket():
    return {
        "source": "hand-written: a 2-socket server, 16 cores x 2 threads per socket",
        "description": "2 sockets (NUMA 0 and 1), 16 cores each with 2 hardware threads; one 25 GbE NIC next to socket 0",
        "hosts": [{
            "id": "two-socket",
            "numa_nodes": [
                {"os_index": 0, "package": 0, "memory_mb": 196608, "cores": cores(0, 16, 32)},
                {"os_index": 1, "package": 1, "memory_mb": 196608, "cores": cores(16, 16, 32)},
            ],
            "nics": [{"name": "eth0", "pci": "0000:18:00.0", "numa": 0, "speed_mbps": 25000, "type": "ethernet"}],
        }],
    }


# DGX-1 (V100) hybrid cube-mesh: links between GPU pairs (1 or 2 NVLinks); other pairs cross PCIe.
DGX1_NVLINKS = [(0, 1, 1), (0, 2, 1), (0, 3, 2), (0, 4, 2), (1, 2, 2), (1, 3, 1), (1, 5, 2), (2, 3, 2), (2, 6, 1),
                (3, 7, 1), (4, 5, 1), (4, 6, 1), (4, 7, 2), (5, 6, 2), (5, 7, 1), (6, 7, 2)]


def gpu8_nvlink():
    gpu_pci = ["0000:06:00.0", "0000:07:00.0", "0000:0a:00.0", "0000:0b:00.0",
               "0000:85:00.0", "0000:86:00.0", "0000:89:00.0", "0000:8a:00.0"]
    nic_pci = ["0000:05:00.0", "0000:0c:00.0", "0000:84:00.0", "0000:8b:00.0"]
    return {
        "source": "hand-written: a DGX-1-like 8-GPU host",
        "description": ("2 sockets x 20 cores x 2 threads; 8 V100 GPUs in a hybrid cube-mesh of NVLinks (1 or 2 "
                        "links per joined pair), 4 on each socket; 4 EDR InfiniBand NICs, 2 per socket; PCIe Gen3"),
        "links": {"pcie": {"bandwidth_gbs": 12}, "nvlink": {"bandwidth_gbs": 24}},
        "hosts": [{
            "id": "dgx1",
            "numa_nodes": [
                {"os_index": 0, "package": 0, "memory_mb": 262144, "cores": cores(0, 20, 40)},
                {"os_index": 1, "package": 1, "memory_mb": 262144, "cores": cores(20, 20, 40)},
            ],
            "gpus": [{"name": "gpu%d" % i, "pci": gpu_pci[i], "numa": i // 4, "vendor": "0x10de", "device": "0x1db1",
                      "model": "Tesla V100-SXM2-16GB"} for i in range(8)],
            "nics": [{"name": "ib%d" % i, "pci": nic_pci[i], "numa": i // 2, "speed_mbps": 100000,
                      "type": "infiniband", "rdma": "mlx5_%d" % i} for i in range(4)],
            "nvlinks": [("gpu%d" % a, "gpu%d" % b, c) for a, b, c in DGX1_NVLINKS],
        }],
    }


def four_hosts():
    hosts = []
    for h in range(4):
        speed = 10000 if h == 3 else 25000
        hosts.append({
            "id": "node%d" % h,
            "numa_nodes": [
                {"os_index": 0, "package": 0, "memory_mb": 65536, "cores": cores(0, 8)},
                {"os_index": 1, "package": 1, "memory_mb": 65536, "cores": cores(8, 8)},
            ],
            "nics": [{"name": "eth0", "pci": "0000:3b:00.0", "numa": 0, "speed_mbps": speed, "type": "ethernet"}],
        })
    return {
        "source": "hand-written: 4 hosts x 2 sockets",
        "description": ("4 hosts named as stratarun --nodes 4 names them (node0-node3), each 2 sockets x 8 cores; "
                        "a 25 GbE NIC on socket 0, except node3's, which is 10 GbE"),
        "links": {"network": {"latency_us": 12}},
        "hosts": hosts,
    }


if __name__ == "__main__":
    for name, graph in [("two_socket.json", two_socket()), ("gpu8_nvlink_4nic.json", gpu8_nvlink()),
                        ("four_hosts_two_sockets.json", four_hosts())]:
        with open(os.path.join(HERE, name), "w") as f:
            f.write(dump(graph))
