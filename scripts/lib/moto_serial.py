"""moto's server, one request at a time: `moto_serial.py -H HOST -p PORT`.

moto's own server runs requests at once in threads, and its DynamoDB backend takes no lock: under
load, two conditional writes of one key can both pass their condition, which DynamoDB never
allows. The tests check exactly that atomicity (one winner per key), so this server runs moto's
application behind one lock: each request alone, as DynamoDB decides each conditional write.
scripts/lib/servers.sh installs it beside moto and starts it.
"""

import argparse
import os
import threading

from werkzeug.serving import run_simple

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, required=True)
    args = parser.parse_args()
    os.environ.setdefault("MOTO_PORT", str(args.port))
    app = DomainDispatcherApplication(create_backend_app)
    lock = threading.Lock()

    def one_at_a_time(environ, start_response):
        with lock:
            # The whole response is made under the lock (moto's are lists, not streams).
            return list(app(environ, start_response))

    run_simple(args.host, args.port, one_at_a_time, threaded=True, request_handler=MotoRequestHandler)


if __name__ == "__main__":
    main()
