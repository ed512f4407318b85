#!/usr/bin/python3
"""A stand-in for the places AWS hands out temporary credentials, on loopback.

It serves, on one port:
  EC2 instance metadata, IMDSv2   PUT /latest/api/token, then
                                  GET /latest/meta-data/iam/security-credentials/
                                  and .../ROLE with X-aws-ec2-metadata-token
  container credentials           GET /container/... (ECS, EKS Pod Identity),
                                  checking Authorization when --container-token
                                  is given
  STS AssumeRoleWithWebIdentity   POST / with Action=AssumeRoleWithWebIdentity;
                                  a WebIdentityToken starting "valid-" is
                                  accepted, "expired-" gets 400
                                  ExpiredTokenException, any other 403
                                  AccessDenied
and hands out REAL temporary credentials: each answer is a fresh AssumeRole
to MinIO's own STS with its root user (SigV4-signed, DurationSeconds 900), so
that what a client signs with really works against that MinIO. The
Expiration it reports is --expires-in seconds from now (shorter than the real
15 minutes) so that clients renew within a test.

Control and counts, for the tests:
  GET  /stats          JSON: hits per kind, the web identity tokens and
                       container Authorization headers seen, IMDS tokens sent
  POST /fail?kind=K&n=N  the next N credential answers of kind K (imds,
                       container, sts) are HTTP 500

Python standard library only. Prints nothing; writes its port to --port-file
once it listens.
"""

import argparse
import datetime
import hashlib
import hmac
import http.server
import json
import os
import secrets
import threading
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

ROLE = "roost-test-role"


def _sign(key, msg):
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def minio_assume_role(endpoint, access_key, secret_key):
    """Temporary credentials from MinIO's STS: (key, secret, token)."""
    body = b"Action=AssumeRole&DurationSeconds=900&Version=2011-06-15"
    now = datetime.datetime.now(datetime.timezone.utc)
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    day = now.strftime("%Y%m%d")
    host = urllib.parse.urlparse(endpoint).netloc
    payload = hashlib.sha256(body).hexdigest()
    content_type = "application/x-www-form-urlencoded"
    headers = (f"content-type:{content_type}\nhost:{host}\n"
               f"x-amz-content-sha256:{payload}\nx-amz-date:{amz_date}\n")
    signed = "content-type;host;x-amz-content-sha256;x-amz-date"
    canonical = f"POST\n/\n\n{headers}\n{signed}\n{payload}"
    scope = f"{day}/us-east-1/sts/aws4_request"
    to_sign = ("AWS4-HMAC-SHA256\n" + amz_date + "\n" + scope + "\n" +
               hashlib.sha256(canonical.encode()).hexdigest())
    key = ("AWS4" + secret_key).encode()
    for part in (day, "us-east-1", "sts", "aws4_request"):
        key = _sign(key, part)
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    request = urllib.request.Request(
        endpoint + "/", data=body, method="POST",
        headers={
            "Content-Type": content_type,
            "X-Amz-Date": amz_date,
            "X-Amz-Content-Sha256": payload,
            "Authorization": (f"AWS4-HMAC-SHA256 Credential={access_key}/"
                              f"{scope}, SignedHeaders={signed}, "
                              f"Signature={signature}"),
        })
    with urllib.request.urlopen(request, timeout=10) as answer:
        root = ET.fromstring(answer.read())
    ns = {"s": root.tag[1:root.tag.index("}")]} if root.tag[0] == "{" else {}
    prefix = "s:" if ns else ""
    c = root.find(f".//{prefix}Credentials", ns)
    return tuple(c.find(f"{prefix}{name}", ns).text
                 for name in ("AccessKeyId", "SecretAccessKey", "SessionToken"))


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.hits = {"imds_token": 0, "imds_role": 0, "imds": 0,
                     "container": 0, "sts": 0}
        self.web_tokens = []
        self.container_auth = []
        self.imds_tokens = set()
        self.fail = {}

    def count(self, kind):
        with self.lock:
            self.hits[kind] += 1
            if self.fail.get(kind, 0) > 0:
                self.fail[kind] -= 1
                return False
            return True

    def credentials(self):
        key, secret, token = minio_assume_role(
            self.args.minio_endpoint, self.args.minio_access_key,
            self.args.minio_secret_key)
        expires = (datetime.datetime.now(datetime.timezone.utc) +
                   datetime.timedelta(seconds=self.args.expires_in))
        return key, secret, token, expires.strftime("%Y-%m-%dT%H:%M:%SZ")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None

    def log_message(self, *args):
        pass

    def reply(self, status, body, content_type="text/plain"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def json_credentials(self, imds):
        key, secret, token, expiration = self.state.credentials()
        doc = {"AccessKeyId": key, "SecretAccessKey": secret, "Token": token,
               "Expiration": expiration}
        if imds:
            doc.update({"Code": "Success", "Type": "AWS-HMAC"})
        else:
            doc["RoleArn"] = "arn:aws:iam::000000000000:role/" + ROLE
        self.reply(200, json.dumps(doc), "application/json")

    def do_PUT(self):
        s = self.state
        if self.path == "/latest/api/token":
            if not self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
                self.reply(400, "missing X-aws-ec2-metadata-token-ttl-seconds")
                return
            s.count("imds_token")
            token = "imds-" + secrets.token_hex(8)
            with s.lock:
                s.imds_tokens.add(token)
            self.reply(200, token)
            return
        self.reply(404, "not found")

    def do_GET(self):
        s = self.state
        path = self.path
        if path == "/stats":
            with s.lock:
                doc = dict(s.hits, web_tokens=s.web_tokens,
                           container_auth=s.container_auth)
            self.reply(200, json.dumps(doc), "application/json")
            return
        if path.startswith("/latest/meta-data/iam/security-credentials/"):
            with s.lock:
                ok = self.headers.get("X-aws-ec2-metadata-token") in s.imds_tokens
            if not ok:
                self.reply(401, "")
                return
            role = path[len("/latest/meta-data/iam/security-credentials/"):]
            if role == "":
                s.count("imds_role")
                self.reply(200, ROLE)
            elif role == ROLE:
                if not s.count("imds"):
                    self.reply(500, "failing as told")
                    return
                self.json_credentials(imds=True)
            else:
                self.reply(404, "")
            return
        if path.startswith("/container/"):
            auth = self.headers.get("Authorization", "")
            with s.lock:
                s.container_auth.append(auth)
            if s.args.container_token and auth != s.args.container_token:
                s.count("container")
                self.reply(403, json.dumps(
                    {"code": "AccessDeniedException",
                     "message": "Authorization does not match"}),
                    "application/json")
                return
            if not s.count("container"):
                self.reply(500, "failing as told")
                return
            self.json_credentials(imds=False)
            return
        self.reply(404, "not found")

    def do_POST(self):
        s = self.state
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length).decode()
        parsed = urllib.parse.urlparse(self.path)
        if parsed.path == "/fail":
            q = urllib.parse.parse_qs(parsed.query)
            with s.lock:
                s.fail[q["kind"][0]] = int(q["n"][0])
            self.reply(200, "ok")
            return
        form = urllib.parse.parse_qs(body)
        if form.get("Action") != ["AssumeRoleWithWebIdentity"]:
            self.reply(400, "unknown action")
            return
        token = form.get("WebIdentityToken", [""])[0]
        with s.lock:
            s.web_tokens.append(token)
        if not s.count("sts"):
            self.sts_error(500, "Receiver", "ServiceUnavailable",
                           "failing as told")
            return
        if token.startswith("expired-"):
            self.sts_error(400, "Sender", "ExpiredTokenException",
                           "Token expired")
            return
        if not token.startswith("valid-"):
            self.sts_error(403, "Sender", "AccessDenied",
                           "Not authorized to perform "
                           "sts:AssumeRoleWithWebIdentity")
            return
        key, secret, session, expiration = s.credentials()
        role = form.get("RoleArn", [""])[0]
        self.reply(200, f"""<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleWithWebIdentityResult>
    <AssumedRoleUser><Arn>{role}/session</Arn></AssumedRoleUser>
    <Credentials>
      <AccessKeyId>{key}</AccessKeyId>
      <SecretAccessKey>{secret}</SecretAccessKey>
      <SessionToken>{session}</SessionToken>
      <Expiration>{expiration}</Expiration>
    </Credentials>
  </AssumeRoleWithWebIdentityResult>
</AssumeRoleWithWebIdentityResponse>""", "text/xml")

    def sts_error(self, status, kind, code, message):
        self.reply(status, f"""<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <Error><Type>{kind}</Type><Code>{code}</Code><Message>{message}</Message></Error>
  <RequestId>standin</RequestId>
</ErrorResponse>""", "text/xml")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--minio-endpoint", required=True)
    p.add_argument("--minio-access-key", required=True)
    p.add_argument("--minio-secret-key", required=True)
    p.add_argument("--expires-in", type=int, default=900,
                   help="the Expiration reported, in seconds from now")
    p.add_argument("--container-token", default="",
                   help="the Authorization the container endpoint wants")
    p.add_argument("--port-file", required=True)
    args = p.parse_args()
    Handler.state = State(args)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
