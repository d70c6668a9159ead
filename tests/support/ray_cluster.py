"""A Ray cluster of this machine for core's tests (tests/core/ray_lane_test.cpp): a head and two worker
nodes on loopback, one logical GPU each (Ray's bookkeeping; no GPU needed). Prints "address HOST:PORT",
then reads commands from stdin: "kill" removes a worker node at once (no drain), as a machine that
dies, and prints "killed NODE_ID"; the end of stdin shuts the cluster down."""

import os
import sys

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # a test cluster reports nothing anywhere

from ray.cluster_utils import Cluster  # noqa: E402

NODE = {"num_cpus": 2, "num_gpus": 1, "object_store_memory": 80 * 1024 * 1024}


def main():
    cluster = Cluster(initialize_head=True, head_node_args=dict(NODE))
    workers = [cluster.add_node(**NODE) for _ in range(2)]
    cluster.wait_for_nodes()
    print(f"address {cluster.address}", flush=True)
    try:
        for line in sys.stdin:
            if line.strip() == "kill" and workers:
                node = workers.pop(0)
                cluster.remove_node(node, allow_graceful=False)
                print(f"killed {node.node_id}", flush=True)
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    main()
