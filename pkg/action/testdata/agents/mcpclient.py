"""A minimal MCP client standing in for an agent (agent-command) in tests.

It reads $DEPONENT_MCP_CONFIG, starts the server it names (Deponent's relay)
the way an agent CLI does, and speaks newline-delimited JSON-RPC to it. What
it does is chosen by argv[1]:

  calls FILE     make the tool calls listed in FILE (a JSON array of
                 {"name", "arguments"}), print each result as a JSON line
  crash          make one call, then exit 3
  hang           make one call, then sleep forever
  flood          call read_file forever
  disconnect     start a long run_cmd and die (os._exit) while it runs
  selfwrite      try to write the workspace directly (no tool call)
"""

import json
import os
import subprocess
import sys
import time


def start():
    with open(os.environ["DEPONENT_MCP_CONFIG"]) as f:
        cfg = json.load(f)
    srv = cfg["mcpServers"]["deponent"]
    env = dict(os.environ)
    env.update(srv.get("env") or {})
    p = subprocess.Popen([srv["command"]] + srv["args"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    return p


class Client:
    def __init__(self):
        self.p = start()
        self.next = 1

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def request(self, method, params, wait=True):
        rid = self.next
        self.next += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        if not wait:
            return None
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit("the server closed the connection")
            msg = json.loads(line)
            if msg.get("id") == rid:
                return msg

    def init(self):
        r = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "test-agent", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def call(self, name, arguments, wait=True):
        return self.request("tools/call", {"name": name, "arguments": arguments}, wait)


def main():
    mode = sys.argv[1]
    if mode == "selfwrite":
        try:
            with open("hacked.txt", "w") as f:
                f.write("written by the agent process itself\n")
            print("WROTE the workspace")
        except OSError as e:
            print("refused:", e)
        sys.exit(0)
    c = Client()
    c.init()
    if mode == "calls":
        with open(sys.argv[2]) as f:
            calls = json.load(f)
        for call in calls:
            r = c.call(call["name"], call["arguments"])
            print(json.dumps(r), flush=True)
        c.p.stdin.close()
        c.p.wait()
    elif mode == "crash":
        print(json.dumps(c.call("read_file", {"path": "README.md"})), flush=True)
        os._exit(3)
    elif mode == "hang":
        print(json.dumps(c.call("read_file", {"path": "README.md"})), flush=True)
        while True:
            time.sleep(60)
    elif mode == "flood":
        while True:
            c.call("read_file", {"path": "README.md"})
    elif mode == "disconnect":
        c.call("run_cmd", {"cmd": "python3 -c 'import time; time.sleep(80)'"}, wait=False)
        time.sleep(2)
        c.p.kill()
        os._exit(0)


main()
