"""A minimal LSP client over a server's stdin/stdout, for the scripted test
(test/lsp/session.py) and the latency benchmark (bench/lsp)."""
import json
import signal
import subprocess
import sys
import time


class Client:
    def __init__(self, command, **popen):
        self.server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, **popen)
        self.requests = 0

    def send_raw(self, body: bytes, header=None):
        header = b"Content-Length: %d\r\n\r\n" % len(body) if header is None else header
        self.server.stdin.write(header + body)
        self.server.stdin.flush()

    def send(self, message):
        self.send_raw(json.dumps({"jsonrpc": "2.0", **message}).encode())

    def notify(self, method, params):
        self.send({"method": method, "params": params})

    def request(self, method, params=None):
        self.requests += 1
        self.send({"id": self.requests, "method": method, "params": params or {}})
        return self.requests

    def receive(self):
        length = None
        while True:
            line = self.server.stdout.readline()
            if not line:
                sys.exit("FAIL: the server closed its output")
            line = line.strip()
            if not line:
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.server.stdout.read(length))

    def wait_for(self, predicate, what, seconds=300, on_other=None):
        """The first message matching predicate; on_other sees every other message. Fails
        (and stops the server) when none comes within seconds, even if the server goes
        silent."""
        def expire(*_):
            raise TimeoutError
        previous = signal.signal(signal.SIGALRM, expire)
        signal.alarm(seconds)
        try:
            while True:
                message = self.receive()
                if predicate(message):
                    return message
                if on_other:
                    on_other(message)
        except TimeoutError:
            self.server.kill()
            sys.exit(f"FAIL: no {what} within {seconds} s")
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)

    def reply_to(self, request_id):
        return self.wait_for(lambda m: m.get("id") == request_id and "method" not in m,
                             f"reply to request {request_id}")


def uri(path):
    return "file://" + str(path)


def diagnostics_for(path, version=None):
    def match(m):
        return (m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri(path)
                and (version is None or m["params"].get("version") == version))
    return match


def open_document(client, path, text, version=1):
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri(path), "languageId": "cpp", "version": version, "text": text}})


def change_document(client, path, text, version):
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri(path), "version": version},
                                             "contentChanges": [{"text": text}]})
