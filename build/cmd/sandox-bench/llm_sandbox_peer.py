"""The peer side of `sandox-bench`: llm-sandbox on its Docker backend.

It reads one request per line on stdin and answers each with one JSON line
on stdout, so that the Go side can interleave it with its own measurements:

  cold     open a session, run `true`, close it; times in ms
  open     open the session that `cmd` uses
  cmd      run `true` in that session; time in ms
  close    close that session

The image is local (argv[1]); llm-sandbox finds it with images.get and never
pulls, and skip_environment_setup keeps it from installing anything.
"""

import json
import sys
import time

from llm_sandbox import SandboxSession


def session(image):
    return SandboxSession(
        backend="docker",
        lang="python",
        image=image,
        keep_template=True,
        skip_environment_setup=True,
        # The local image is made with `docker import` and has no command;
        # python3 on a tty keeps the container up, as the CMD of the Python
        # images llm-sandbox uses by default does. Under the engine's init
        # (as sandox runs its executor) it stops on SIGTERM: as PID 1 it
        # would ignore it, and every close would wait out docker's 10 s.
        runtime_configs={"command": "python3", "init": True},
        verbose=False,
    )


def ms(t0):
    return (time.perf_counter() - t0) * 1000


def main():
    image = sys.argv[1]
    held = None
    for line in sys.stdin:
        req = line.strip()
        out = {}
        try:
            if req == "cold":
                t0 = time.perf_counter()
                s = session(image)
                s.open()
                out["open_ms"] = ms(t0)
                r = s.execute_command("true")
                out["first_ms"] = ms(t0)
                t1 = time.perf_counter()
                s.close()
                out["close_ms"] = ms(t1)
                out["exit"] = r.exit_code
            elif req == "open":
                held = session(image)
                held.open()
            elif req == "cmd":
                t0 = time.perf_counter()
                r = held.execute_command("true")
                out["ms"] = ms(t0)
                out["exit"] = r.exit_code
            elif req == "close":
                held.close()
                held = None
            else:
                out["error"] = "unknown request " + req
        except Exception as e:  # the Go side reports it
            out["error"] = repr(e)
        print(json.dumps(out), flush=True)
    if held is not None:
        held.close()


if __name__ == "__main__":
    main()
