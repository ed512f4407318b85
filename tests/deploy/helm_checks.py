"""What tests/deploy/helm_test.sh asserts of the chart's rendered objects.

Usage: helm_checks.py DEPLOY_DIR RENDER_DIR
  RENDER_DIR holds CASE.yaml (`helm template` of deploy/helm/roost/ci/CASE-values.yaml,
  or `defaults`: the chart's own values, a repository URI and a long release
  name) and CASE.notes (NOTES.txt, rendered into a ConfigMap's data.notes).
Or:    helm_checks.py --args RENDERED.yaml
  prints shard 0's roost-server command line, one argument a line.
Prints one line per failed assertion and exits 1 if there was any.
"""
import json
import os
import re
import sys

import yaml

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
    return ok


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def of_kind(objects, kind):
    return [o for o in objects if o["kind"] == kind]


def container(sts):
    return sts["spec"]["template"]["spec"]["containers"][0]


def flag(args, name):
    """The value of --name=VALUE in args; None if absent; fails if repeated."""
    values = [a.split("=", 1)[1] for a in args if a.startswith(f"--{name}=")]
    check(len(values) <= 1, f"--{name} given {len(values)} times: {values}")
    return values[0] if values else None


def matches(selector, labels):
    return all(labels.get(k) == v for k, v in selector.items())


def shard_of(sts):
    match = re.fullmatch(r".*-shard-(\d+)", sts["metadata"]["name"])
    return int(match.group(1)) if match else None


def secret_env(sts, key):
    for e in container(sts).get("env", []):
        if e["name"] == key:
            return e["valueFrom"]["secretKeyRef"]
    return None


def volume(sts, name):
    for v in sts["spec"]["template"]["spec"].get("volumes", []):
        if v["name"] == name:
            return v
    return None


def common(case, objects):
    """What every value set must render."""
    stss = of_kind(objects, "StatefulSet")
    services = {s["metadata"]["name"]: s for s in of_kind(objects, "Service")}
    pdbs = of_kind(objects, "PodDisruptionBudget")
    check(stss, f"{case}: no StatefulSet")
    shards = sorted(shard_of(s) for s in stss)
    check(shards == list(range(len(stss))), f"{case}: StatefulSets of shards {shards}")
    check(len(services) == len(stss), f"{case}: {len(services)} Services for {len(stss)} shards")
    for sts in stss:
        name = sts["metadata"]["name"]
        where = f"{case}: {name}"
        shard = shard_of(sts)
        spec = sts["spec"]
        pod = spec["template"]["spec"]
        labels = spec["template"]["metadata"]["labels"]
        c = container(sts)
        args = c["args"]
        # Pod names <sts>-<ordinal> and the controller-revision-hash label
        # <sts>-<10 characters> must fit 63 characters.
        check(len(name) <= 52, f"{where}: name longer than 52 characters")
        check(matches(spec["selector"]["matchLabels"], labels), f"{where}: selector does not select its pods")
        check(labels.get("roost/shard") == str(shard), f"{where}: pod label roost/shard is {labels.get('roost/shard')}")
        check(flag(args, "shard") == str(shard), f"{where}: --shard={flag(args, 'shard')}")
        check(flag(args, "data-dir") == "/var/lib/roost", f"{where}: --data-dir={flag(args, 'data-dir')}")
        check(flag(args, "repository"), f"{where}: no --repository")
        mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
        check(mounts.get("/var/lib/roost", {}).get("name") == "data", f"{where}: no volume data at /var/lib/roost")
        check(not any("subPath" in m for m in mounts.values()), f"{where}: a subPath mount (never updated)")
        # Ports and probes.
        listen = flag(args, "listen") or ""
        grpc_port = int(listen.rsplit(":", 1)[-1] or 0)
        check(listen == f"0.0.0.0:{grpc_port}", f"{where}: --listen={listen}")
        ports = {p["name"]: p["containerPort"] for p in c["ports"]}
        check(ports.get("grpc") == grpc_port, f"{where}: container port grpc is {ports.get('grpc')}")
        metrics = flag(args, "metrics-listen")
        if metrics:
            check(ports.get("metrics") == int(metrics.rsplit(":", 1)[1]), f"{where}: container port metrics")
        # The headless Service of the shard: the StatefulSet's serviceName.
        service = services.get(spec["serviceName"])
        if check(service is not None, f"{where}: no Service {spec['serviceName']}"):
            check(service["spec"].get("clusterIP") == "None", f"{where}: Service not headless")
            check(matches(service["spec"]["selector"], labels), f"{where}: Service selects not its pods")
            check(not service["spec"].get("publishNotReadyAddresses"), f"{where}: not-ready replicas in DNS")
            others = [s for s in stss if s is not sts]
            check(not any(matches(service["spec"]["selector"], o["spec"]["template"]["metadata"]["labels"])
                          for o in others), f"{where}: Service selects another shard's pods")
            check({"name": "grpc", "port": grpc_port, "targetPort": "grpc", "protocol": "TCP",
                   "appProtocol": "grpc"} in service["spec"]["ports"], f"{where}: Service has no grpc port")
        mine = [p for p in pdbs if matches(p["spec"]["selector"]["matchLabels"], labels)]
        check(len(mine) == 1, f"{where}: {len(mine)} PodDisruptionBudgets select its pods")
        for probe, service_name in [("readinessProbe", "roost.v1.Lookup"), ("livenessProbe", "roost.v1.Registry"),
                                    ("startupProbe", "roost.v1.Registry")]:
            p = c.get(probe)
            if not check(p, f"{where}: no {probe}"):
                continue
            if "grpc" in p:
                check(p["grpc"] == {"port": grpc_port, "service": service_name},
                      f"{where}: {probe}.grpc is {p['grpc']}")
            else:
                check(service_name in " ".join(p["exec"]["command"]), f"{where}: {probe} does not ask {service_name}")
        # Stopping outlasts the drain and the shutdown timeout.
        drain = float(flag(args, "drain-period"))
        shutdown = float(flag(args, "shutdown-timeout"))
        check(pod["terminationGracePeriodSeconds"] > drain + shutdown + 1,
              f"{where}: terminationGracePeriodSeconds {pod['terminationGracePeriodSeconds']} <= {drain} + {shutdown} + 1")
        # Locked down.
        psc, sc = pod["securityContext"], c["securityContext"]
        check(psc.get("runAsNonRoot") is True and sc.get("runAsNonRoot") is True, f"{where}: may run as root")
        check(psc.get("seccompProfile") == {"type": "RuntimeDefault"}, f"{where}: pod seccomp not RuntimeDefault")
        check(sc.get("readOnlyRootFilesystem") is True, f"{where}: root filesystem writable")
        check(sc.get("allowPrivilegeEscalation") is False, f"{where}: privilege escalation allowed")
        check(sc.get("capabilities") == {"drop": ["ALL"]}, f"{where}: capabilities {sc.get('capabilities')}")
        check(pod.get("automountServiceAccountToken") is False, f"{where}: service account token mounted")
        # The repository's Secret, when there is one.
        env = {e["name"]: e for e in c.get("env", [])}
        if flag(args, "repository") == "$(ROOST_REPOSITORY)":
            check("ROOST_REPOSITORY" in env, f"{where}: --repository=$(ROOST_REPOSITORY) but no such variable")
        for key in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]:
            if key in env:
                check(not env[key]["valueFrom"]["secretKeyRef"].get("optional"), f"{where}: {key} optional")
        # A spread of each shard's replicas over nodes, by default.
        anti = pod.get("affinity", {}).get("podAntiAffinity", {})
        terms = anti.get("requiredDuringSchedulingIgnoredDuringExecution", []) + [
            t["podAffinityTerm"] for t in anti.get("preferredDuringSchedulingIgnoredDuringExecution", [])]
        check(any(t["topologyKey"] == "kubernetes.io/hostname" and matches(t["labelSelector"]["matchLabels"], labels)
                  and t["labelSelector"]["matchLabels"].get("roost/shard") == str(shard) for t in terms),
              f"{where}: no anti-affinity over the shard's replicas")
    return stss, services, pdbs


def case_defaults(objects, notes, deploy):
    stss, services, pdbs = common("defaults", objects)
    check(len(stss) == 1 and stss[0]["spec"]["replicas"] == 2, "defaults: not 1 StatefulSet of 2 replicas")
    kinds = sorted(o["kind"] for o in objects)
    check(kinds == ["PodDisruptionBudget", "Service", "StatefulSet"], f"defaults: renders {kinds}")
    sts = stss[0]
    args = container(sts)["args"]
    check(flag(args, "load-mode") == "mmap", "defaults: --load-mode is not mmap")
    check(flag(args, "admin-listen") == "127.0.0.1:50052", "defaults: admin service off loopback")
    check(not any(a.startswith("--tls") for a in args), "defaults: TLS flags")
    check(sts["spec"]["podManagementPolicy"] == "Parallel", "defaults: podManagementPolicy")
    claims = sts["spec"].get("volumeClaimTemplates", [])
    check(len(claims) == 1 and claims[0]["metadata"]["name"] == "data"
          and claims[0]["spec"]["resources"]["requests"]["storage"] == "10Gi", "defaults: no 10Gi claim data")
    check(volume(sts, "data") is None, "defaults: a data volume besides the claim")
    check("preferredDuringSchedulingIgnoredDuringExecution" in
          sts["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"], "defaults: anti-affinity not preferred")


def case_1x1(objects, notes, deploy):
    stss, services, pdbs = common("1x1", objects)
    check(len(stss) == 1 and stss[0]["spec"]["replicas"] == 1, "1x1: not 1 StatefulSet of 1 replica")
    check(len(services) == 1 and len(pdbs) == 1, "1x1: not 1 Service and 1 PDB")
    secrets = of_kind(objects, "Secret")
    if check(len(secrets) == 1, f"1x1: {len(secrets)} Secrets"):
        data = secrets[0]["stringData"]
        check(data == {"AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret-example",
                       "AWS_REGION": "eu-west-1", "AWS_ENDPOINT_URL": "http://minio.storage.svc:9000"},
              f"1x1: Secret holds {sorted(data)}")
        sts = stss[0]
        for key in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ENDPOINT_URL",
                    "AWS_SESSION_TOKEN"]:
            ref = secret_env(sts, key)
            check(ref and ref["name"] == secrets[0]["metadata"]["name"] and ref["key"] == key,
                  f"1x1: {key} not from the Secret")
        check(secret_env(sts, "ROOST_REPOSITORY") is None, "1x1: ROOST_REPOSITORY from the Secret despite the URI")
        check(flag(container(sts)["args"], "repository") == "s3://tables/prod", "1x1: --repository")
        check("checksum/repository-secret" in sts["spec"]["template"]["metadata"].get("annotations", {}),
              "1x1: pods do not roll when the Secret changes")


def case_3x2(objects, notes, deploy):
    stss, services, pdbs = common("3x2", objects)
    check(len(stss) == 3 and all(s["spec"]["replicas"] == 2 for s in stss),
          f"3x2: {[s['spec']['replicas'] for s in stss]} replicas")
    check(len(services) == 3 and all(s["spec"]["clusterIP"] == "None" for s in services.values()),
          "3x2: not 3 headless Services")
    check(len(pdbs) == 3 and all(p["spec"] == {"minAvailable": 1, "selector": p["spec"]["selector"]} for p in pdbs),
          "3x2: not 3 PDBs of minAvailable 1")
    check(not of_kind(objects, "Secret"), "3x2: made a Secret despite existingSecret")
    for sts in stss:
        args = container(sts)["args"]
        check(flag(args, "repository") == "$(ROOST_REPOSITORY)", "3x2: --repository not from the Secret")
        ref = secret_env(sts, "ROOST_REPOSITORY")
        check(ref and ref["name"] == "roost-repository" and not ref.get("optional"), "3x2: ROOST_REPOSITORY")
        check(flag(args, "download-rate") == "104857600", f"3x2: --download-rate={flag(args, 'download-rate')}")
        check(flag(args, "max-batch") == "20000", "3x2: extraArgs lost")
        anti = sts["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
        check(list(anti) == ["requiredDuringSchedulingIgnoredDuringExecution"], "3x2: anti-affinity not required")
        check(sts["spec"]["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Delete", "whenScaled": "Retain"},
              "3x2: persistentVolumeClaimRetentionPolicy")
        claim = sts["spec"]["volumeClaimTemplates"][0]["spec"]
        check(claim["storageClassName"] == "fast-ssd" and claim["resources"]["requests"]["storage"] == "50Gi",
              "3x2: claim")
    check("dns:///roost-shard-2.default.svc:50051" in notes, "3x2: NOTES.txt names no dns:/// target of shard 2")
    layout = re.search(r'(\{"shards".*?\]\]?\})', notes, re.S)
    if check(layout, "3x2: NOTES.txt has no layout file"):
        try:
            parsed = json.loads(layout.group(1))
        except ValueError as e:
            parsed = f"not JSON ({e}): {layout.group(1)}"
        check(parsed == {"shards": [[f"dns:///roost-shard-{i}.default.svc:50051"] for i in range(3)]},
              f"3x2: NOTES.txt layout is {parsed}")


def case_hugepages(objects, notes, deploy):
    stss, _, _ = common("hugepages", objects)
    for sts in stss:
        c = container(sts)
        check(flag(c["args"], "load-mode") == "huge-pages", "hugepages: --load-mode not huge-pages")
        # Transparent huge pages (madvise on anonymous memory), not
        # hugetlbfs: the copies are ordinary memory of the container.
        resources = c["resources"]
        check(resources["limits"]["memory"] == "16Gi", "hugepages: limits.memory")
        check(not any(k.startswith("hugepages-") for part in resources.values() for k in part),
              "hugepages: hugetlbfs pages requested, which the server never maps")
        check(volume(sts, "data") == {"name": "data", "emptyDir": {"sizeLimit": "20Gi"}},
              f"hugepages: data volume {volume(sts, 'data')}")
        check("volumeClaimTemplates" not in sts["spec"], "hugepages: a claim despite persistence off")
        check(sts["spec"]["template"]["spec"]["nodeSelector"] == {"example.com/transparent-hugepage": "madvise"},
              "hugepages: nodeSelector")
    check("transparent_hugepage" in notes, "hugepages: NOTES.txt says nothing of THP")


def case_tls(objects, notes, deploy):
    stss, services, _ = common("tls", objects)
    for sts in stss:
        c = container(sts)
        args = c["args"]
        expected = {"tls-cert": "/etc/roost/tls/tls.crt", "tls-key": "/etc/roost/tls/tls.key",
                    "tls-client-ca": "/etc/roost/client-ca/ca.crt", "metrics-tls": "false",
                    "admin-listen": "0.0.0.0:50052", "access-policy": "/etc/roost/access-policy/policy.json"}
        for name, value in expected.items():
            check(flag(args, name) == value, f"tls: --{name}={flag(args, name)}, not {value}")
        mounts = {m["name"]: m for m in c["volumeMounts"]}
        for name, path, secret in [("tls", "/etc/roost/tls", "roost-server-tls"),
                                   ("client-ca", "/etc/roost/client-ca", "roost-client-ca"),
                                   ("access-policy", "/etc/roost/access-policy", "roost-access-policy")]:
            check(mounts.get(name, {}).get("mountPath") == path and mounts[name].get("readOnly"),
                  f"tls: {name} not mounted read-only at {path}")
            v = volume(sts, name)
            check(v and v["secret"]["secretName"] == secret, f"tls: volume {name} is not Secret {secret}")
        check({p["name"]: p["containerPort"] for p in c["ports"]}.get("admin") == 50052, "tls: no admin port")
        for probe in ["readinessProbe", "livenessProbe", "startupProbe"]:
            check("exec" in c[probe] and "grpc" not in c[probe], f"tls: {probe} is not exec")
        # Readiness and startup: the chart's roost-admin health over mutual
        # TLS; liveness: the values' own command.
        for probe, service in [("readinessProbe", "roost.v1.Lookup"),
                               ("startupProbe", "roost.v1.Registry")]:
            command = c[probe].get("exec", {}).get("command", [])
            want = ["roost-admin", "--lookup-addr=127.0.0.1:50051", "--tls-ca=/etc/roost/tls/ca.crt",
                    "--tls-server-name=roost.prod.svc", "--tls-cert=/etc/roost/tls/tls.crt",
                    "--tls-key=/etc/roost/tls/tls.key", "--timeout=2", "health",
                    f"--service={service}"]
            check(command == want, f"tls: {probe} runs {command}, not {want}")
        check(c["livenessProbe"].get("exec", {}).get("command", [None])[0] == "grpc_health_probe",
              "tls: liveness is not the values' own command")
        check(sts["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 60, "tls: grace period")
    check('"tls": {"ca": "ca.crt", "cert": "client.crt", "key": "client.key"}' in notes,
          "tls: NOTES.txt layout has no mutual TLS")


def case_monitoring(objects, notes, deploy):
    stss, services, _ = common("monitoring", objects)
    monitors = of_kind(objects, "ServiceMonitor")
    if check(len(monitors) == 1, f"monitoring: {len(monitors)} ServiceMonitors"):
        m = monitors[0]
        check(m["apiVersion"] == "monitoring.coreos.com/v1", "monitoring: ServiceMonitor apiVersion")
        check(m["metadata"]["labels"].get("release") == "kube-prometheus-stack", "monitoring: ServiceMonitor labels")
        selected = [s for s in services.values() if matches(m["spec"]["selector"]["matchLabels"], s["metadata"]["labels"])]
        check(len(selected) == len(services) == 2, f"monitoring: ServiceMonitor selects {len(selected)} Services")
        endpoint = m["spec"]["endpoints"][0]
        check(endpoint["port"] == "metrics" and endpoint["scheme"] == "http" and endpoint["interval"] == "15s",
              f"monitoring: endpoint {endpoint}")
        check(all(any(p["name"] == "metrics" for p in s["spec"]["ports"]) for s in selected),
              "monitoring: a Service without a metrics port")
    rules = of_kind(objects, "PrometheusRule")
    if check(len(rules) == 1, f"monitoring: {len(rules)} PrometheusRules"):
        with open(os.path.join(deploy, "prometheus", "roost-rules.yml")) as f:
            groups = yaml.safe_load(f)["groups"]
        check(rules[0]["apiVersion"] == "monitoring.coreos.com/v1", "monitoring: PrometheusRule apiVersion")
        check(rules[0]["spec"] == {"groups": groups},
              "monitoring: PrometheusRule's groups are not deploy/prometheus/roost-rules.yml's")
    dashboards = [o for o in of_kind(objects, "ConfigMap") if "roost.json" in o.get("data", {})]
    if check(len(dashboards) == 1, f"monitoring: {len(dashboards)} dashboard ConfigMaps"):
        d = dashboards[0]
        with open(os.path.join(deploy, "grafana", "roost.json")) as f:
            check(json.loads(d["data"]["roost.json"]) == json.load(f),
                  "monitoring: the ConfigMap's roost.json is not deploy/grafana/roost.json")
        check(d["metadata"]["labels"].get("grafana_dashboard") == "1", "monitoring: no grafana_dashboard label")
        check(d["metadata"]["namespace"] == "monitoring", "monitoring: dashboard namespace")
        check(d["metadata"].get("annotations") == {"grafana_folder": "roost"}, "monitoring: dashboard annotations")
    accounts = of_kind(objects, "ServiceAccount")
    check(len(accounts) == 1 and all(s["spec"]["template"]["spec"].get("serviceAccountName") ==
                                     accounts[0]["metadata"]["name"] for s in stss),
          "monitoring: pods do not run as the chart's ServiceAccount")


def case_irsa(objects, notes, deploy):
    stss, _, _ = common("irsa", objects)
    check(not of_kind(objects, "Secret"), "irsa: a Secret without credentials")
    accounts = of_kind(objects, "ServiceAccount")
    if check(len(accounts) == 1, f"irsa: {len(accounts)} ServiceAccounts"):
        annotations = accounts[0]["metadata"].get("annotations", {})
        check(annotations.get("eks.amazonaws.com/role-arn") == "arn:aws:iam::111122223333:role/roost-reader",
              f"irsa: ServiceAccount annotations {annotations}")
        check(all(s["spec"]["template"]["spec"].get("serviceAccountName") == accounts[0]["metadata"]["name"]
                  for s in stss), "irsa: pods do not run as the annotated ServiceAccount")
    for sts in stss:
        env = {e["name"]: e for e in container(sts).get("env", [])}
        # Nothing that would come before web identity in the chain.
        check(not any(k in env for k in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"]),
              f"irsa: static keys in the environment: {sorted(env)}")
        check(env.get("AWS_REGION", {}).get("value") == "eu-west-1", "irsa: AWS_REGION from extraEnv")
        check(flag(container(sts)["args"], "repository") == "s3://tables/prod", "irsa: --repository")


CASES = {"defaults": case_defaults, "1x1": case_1x1, "3x2": case_3x2, "hugepages": case_hugepages,
         "tls": case_tls, "monitoring": case_monitoring, "irsa": case_irsa}


def main():
    if sys.argv[1] == "--args":
        sts = of_kind(load(sys.argv[2]), "StatefulSet")[0]
        print("\n".join(container(sts)["args"]))
        return 0
    deploy, render = sys.argv[1], sys.argv[2]
    cases = sorted(f[:-len(".yaml")] for f in os.listdir(render) if f.endswith(".yaml"))
    check(cases == sorted(CASES), f"rendered cases {cases}, not {sorted(CASES)}")
    for case in cases:
        if case not in CASES:
            continue
        notes = load(os.path.join(render, case + ".notes"))[0]["data"]["notes"]
        CASES[case](load(os.path.join(render, case + ".yaml")), notes, deploy)
    for failure in failures:
        print(f"helm_checks: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
