# The Python side of package gr00t's interop tests: GR00T's wire as its
# Python peers speak it, with pyzmq, msgpack-python and numpy.
#
# With GR00T_STANDINS naming a folder that holds the package gr00t (GR00T's
# own gr00t/policy/server_client.py, unmodified, beside the stand-ins the
# Go test writes for the three names it imports), the real MsgSerializer,
# PolicyServer and PolicyClient run. Without it, the wire is spoken by the
# few lines below, which pack and unpack as MsgSerializer's hooks are
# documented to (np.save / np.load with allow_pickle=False inside
# {"__ndarray_class__": True, "as_npy": ...}).
#
#   peer.py pack                    the bytes of known messages, for equality
#   peer.py server PORT TOKEN       a PolicyServer with a small numpy policy
#   peer.py client PORT TOKEN       a PolicyClient's calls, checked
#   peer.py echo-server PORT        a PolicyServer whose policy echoes, for benchmarks
#   peer.py bench-client PYPORT GOPORT
#                                   PolicyClients of both servers, timed (see bench)
import dataclasses
import io
import os
import sys
import time

import msgpack
import numpy as np
import zmq

STANDINS = os.environ.get("GR00T_STANDINS")

if STANDINS:
    sys.path.insert(0, STANDINS)
    from gr00t.data.types import ActionConfig, ModalityConfig
    from gr00t.policy.server_client import MsgSerializer, PolicyClient, PolicyServer
    from gr00t.policy.policy import BasePolicy

    to_bytes, from_bytes = MsgSerializer.to_bytes, MsgSerializer.from_bytes
else:
    @dataclasses.dataclass
    class ActionConfig:
        rep: str
        type: str
        format: str
        state_key: str = None

    @dataclasses.dataclass
    class ModalityConfig:
        delta_indices: list
        modality_keys: list
        sin_cos_embedding_keys: list = None
        mean_std_embedding_keys: list = None
        action_configs: list = None

        def __post_init__(self):
            if self.action_configs is not None:
                self.action_configs = [ActionConfig(**a) if isinstance(a, dict) else a for a in self.action_configs]

    def _hook_out(obj):
        if isinstance(obj, ModalityConfig):
            return {"__ModalityConfig_class__": True, "as_json": dataclasses.asdict(obj)}
        if isinstance(obj, np.ndarray):
            f = io.BytesIO()
            np.save(f, obj, allow_pickle=False)
            return {"__ndarray_class__": True, "as_npy": f.getvalue()}
        return obj

    def _hook_in(obj):
        if "__ModalityConfig_class__" in obj:
            return ModalityConfig(**obj["as_json"])
        if "__ndarray_class__" in obj:
            return np.load(io.BytesIO(obj["as_npy"]), allow_pickle=False)
        return obj

    def to_bytes(v):
        return msgpack.packb(v, default=_hook_out)

    def from_bytes(b):
        return msgpack.unpackb(b, object_hook=_hook_in)

    class BasePolicy:
        def __init__(self, strict=False):
            self.strict = strict

        def get_action(self, observation, options=None):
            return self._get_action(observation, options)

    class WireServer:
        def __init__(self, policy, host="*", port=5555, api_token=None):
            self.policy, self.token = policy, api_token
            self.socket = zmq.Context().socket(zmq.REP)
            self.socket.bind(f"tcp://{host}:{port}")

        def run(self):
            endpoints = {
                "ping": (lambda: {"status": "ok", "message": "Server is running"}, False),
                "kill": (lambda: None, False),
                "get_action": (self.policy.get_action, True),
                "reset": (self.policy.reset, True),
                "get_modality_config": (self.policy.get_modality_config, False),
            }
            while True:
                req = from_bytes(self.socket.recv())
                try:
                    if self.token is not None and req.get("api_token") != self.token:
                        raise ValueError("Unauthorized: Invalid API token")
                    name = req.get("endpoint", "get_action")
                    if name not in endpoints:
                        raise ValueError(f"Unknown endpoint: {name}")
                    fn, takes = endpoints[name]
                    out = fn(**req.get("data", {})) if takes else fn()
                except Exception as e:
                    out = {"error": str(e)}
                self.socket.send(to_bytes(out))
                if req.get("endpoint") == "kill":
                    return

    class WireClient:
        def __init__(self, host="localhost", port=5555, timeout_ms=15000, api_token=None, strict=False):
            self.token = api_token
            self.socket = zmq.Context().socket(zmq.REQ)
            self.socket.connect(f"tcp://{host}:{port}")

        def call_endpoint(self, endpoint, data=None, requires_input=True):
            req = {"endpoint": endpoint}
            if requires_input:
                req["data"] = data
            if self.token:
                req["api_token"] = self.token
            self.socket.send(to_bytes(req))
            resp = from_bytes(self.socket.recv())
            if isinstance(resp, dict) and "error" in resp:
                raise RuntimeError(f"Server error: {resp['error']}")
            return resp

        def ping(self):
            self.call_endpoint("ping", requires_input=False)
            return True

        def get_action(self, observation, options=None):
            return tuple(self.call_endpoint("get_action", {"observation": observation, "options": options}))

        def reset(self, options=None):
            return self.call_endpoint("reset", {"options": options})

        def get_modality_config(self):
            return self.call_endpoint("get_modality_config", requires_input=False)

        def kill_server(self):
            self.call_endpoint("kill", requires_input=False)

    # Our own few lines, standing where GR00T's classes stand when its
    # source is given.
    PolicyServer, PolicyClient = WireServer, WireClient


def image(k):
    return ((np.arange(224 * 224 * 3, dtype=np.int64) * 7 + k) % 256).astype(np.uint8).reshape(224, 224, 3)


def observation():
    # Keys in sorted order, as ndpack writes a Go map's.
    return {
        "language": {"annotation.human.task_description": "pick up the red cube \u2713"},
        "state": {
            "f32": (np.arange(32, dtype="<f4") / 8 - 1),
            "f64": np.arange(7, dtype="<f8") * -1.5,
            "flags": np.array([True, False, True]),
            "i64": np.arange(-3, 3, dtype="<i8") * (1 << 40),
            "scale": np.array(0.5, dtype="<f4"),
            "step": np.array(7, dtype="<i8"),
        },
        "video": {"cam0": image(0), "cam1": image(1), "cam2": image(2)},
    }


def modality():
    return {
        "action": ModalityConfig(
            delta_indices=[0, 1, 2, -1],
            modality_keys=["action.x", "action.gripper"],
            mean_std_embedding_keys=["action.x"],
            action_configs=[
                ActionConfig(rep=act_enum("ActionRepresentation", "RELATIVE"), type=act_enum("ActionType", "EEF"),
                             format=act_enum("ActionFormat", "XYZ_ROT6D"), state_key="state.f32"),
                ActionConfig(rep=act_enum("ActionRepresentation", "ABSOLUTE"), type=act_enum("ActionType", "NON_EEF"),
                             format=act_enum("ActionFormat", "DEFAULT")),
            ],
        ),
        "video": ModalityConfig(delta_indices=[0], modality_keys=["video.cam0", "video.cam1", "video.cam2"]),
    }


def act_enum(cls, name):
    if STANDINS:
        import gr00t.data.types as types
        return getattr(types, cls)[name]
    return name


def same(a, b, where="value"):
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), f"{where}: {type(b)} for an array"
        assert a.dtype == b.dtype and a.shape == b.shape, f"{where}: {b.dtype}{b.shape} for {a.dtype}{a.shape}"
        assert np.array_equal(a, b), f"{where}: values differ"
    elif isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), f"{where}: keys {sorted(b)} for {sorted(a)}"
        for k in a:
            same(a[k], b[k], f"{where}.{k}")
    else:
        assert a == b, f"{where}: {b!r} for {a!r}"


class NumpyPolicy(BasePolicy):
    """Answers with the observation, a computed action and a count."""

    calls = 0

    def get_action(self, observation, options=None):
        return self._get_action(observation, options)

    def _get_action(self, observation, options=None):
        if "fail" in observation:
            raise ValueError("the policy refuses: " + str(observation["fail"]))
        NumpyPolicy.calls += 1
        action = {"echo": observation, "action.x": (observation["state"]["f32"] * 2).reshape(4, 8)}
        return action, {"calls": NumpyPolicy.calls, "options": options}

    def reset(self, options=None):
        return {"reset": True, "options": options}

    def get_modality_config(self):
        return modality()

    def check_observation(self, observation):
        pass

    def check_action(self, action):
        pass


class EchoPolicy(BasePolicy):
    def _get_action(self, observation, options=None):
        return observation, {}

    def reset(self, options=None):
        return {}

    def check_observation(self, observation):
        pass

    def check_action(self, action):
        pass


def bench_observation():
    obs = {"video": {f"cam{i}": np.full((224, 224, 3), i, dtype=np.uint8) for i in range(3)}}
    obs["state"] = {"joints": np.zeros(32, dtype=np.float32)}
    return obs


def bench(pyport, goport):
    """After a warm-up prints "ready"; then, for each line on stdin, "pair N"
    makes N pairs of get_action calls, one to each server in turn, and
    prints the median ratio of the Go server's time to the Python server's
    and both mean times in ns; "one" makes one call to the Python server
    and prints its time in ns."""
    py = PolicyClient(host="127.0.0.1", port=pyport, strict=False)
    go = PolicyClient(host="127.0.0.1", port=goport, strict=False)
    obs = bench_observation()
    for _ in range(20):
        py.get_action(obs)
        go.get_action(obs)
    print("ready", flush=True)

    def timed(c):
        t = time.perf_counter_ns()
        c.get_action(obs)
        return time.perf_counter_ns() - t

    for line in sys.stdin:
        cmd = line.split()
        if cmd[0] == "one":
            print(timed(py), flush=True)
            continue
        ratios, tp, tg = [], 0, 0
        for _ in range(int(cmd[1])):
            p, g = timed(py), timed(go)
            ratios.append(g / p)
            tp += p
            tg += g
        ratios.sort()
        n = len(ratios)
        print(ratios[n // 2], tp // n, tg // n, flush=True)


def main():
    mode = sys.argv[1]
    if mode == "bench-client":
        bench(int(sys.argv[2]), int(sys.argv[3]))
        return
    if mode == "echo-server":
        server = PolicyServer(EchoPolicy(), host="127.0.0.1", port=int(sys.argv[2]))
        print(sys.argv[2], flush=True)
        sys.stdout = open(os.devnull, "w")  # PolicyServer prints every request
        server.run()
        return
    if mode == "pack":
        out = sys.stdout.buffer
        for msg in (
            {"endpoint": "get_action", "data": {"observation": observation(), "options": None}, "api_token": "s3cret"},
            modality(),
            [{"action.x": np.arange(16, dtype="<f4").reshape(2, 8)}, {"calls": 1}],
        ):
            b = to_bytes(msg)
            out.write(len(b).to_bytes(8, "little") + b)
        return
    port, token = int(sys.argv[2]), sys.argv[3] or None
    if mode == "server":
        server = PolicyServer(NumpyPolicy(), host="127.0.0.1", port=port, api_token=token)
        print(port, flush=True)
        sys.stdout = open(os.devnull, "w")  # PolicyServer prints every request
        server.run()
        return
    client = PolicyClient(host="127.0.0.1", port=port, api_token=token)
    assert client.ping()
    print("ping", flush=True)
    mc = client.get_modality_config()
    want = modality()
    assert sorted(mc) == sorted(want), sorted(mc)
    for k in want:
        assert mc[k] == want[k], (k, mc[k], want[k])
    print("modality", flush=True)
    obs = observation()
    action, info = client.get_action(obs, {"temperature": 0.5})
    same(obs, action, "action")
    same({"options": {"temperature": 0.5}, "calls": 1}, info, "info")
    print("get_action", flush=True)
    same({}, client.reset(), "reset")
    print("reset", flush=True)
    for what, call, text in (
        ("unknown", lambda: client.call_endpoint("no_such_endpoint", {"x": 1}), "Unknown endpoint: no_such_endpoint"),
        ("policy", lambda: client.get_action({"fail": "on purpose"}), "the policy refuses: on purpose"),
        ("token", lambda: PolicyClient(host="127.0.0.1", port=port, api_token="wrong").ping(), "Unauthorized: Invalid API token"),
    ):
        try:
            call()
        except RuntimeError as e:
            assert text in str(e), (what, str(e))
            print(what, flush=True)
        else:
            raise AssertionError(what + ": no error")
    client.kill_server()
    print("kill", flush=True)


main()
