#!/usr/bin/env bash
# smoke-nodes.sh checks the pod network of a running local cluster started
# with NODES>1 (hack/cluster/up.sh): a TCP server pod pinned on one worker,
# and on every node a client pod that connects to it by pod IP, by Service
# ClusterIP and by the Service's DNS name. The server answers each connection
# with its node and the peer address it saw, so a pass shows the client's
# own pod IP arriving unchanged on another node (no masquerading, a real
# route between the namespaces), not just a connection that succeeded.
#
#   NODES=3 hack/cluster/up.sh && hack/cluster/smoke-nodes.sh
#   SERVER_NODE=dbbench-node-3 hack/cluster/smoke-nodes.sh
#
# Uses docker.io/dbbench/agent:dev (its Debian base has perl and bash; no
# other image is needed). Removes its namespace on exit, pass or fail.
source "$(dirname "$0")/../lib.sh"
source "${DBBENCH_ROOT}/hack/cluster/env.sh"

NS=dbbench-smoke-nodes
IMAGE=docker.io/dbbench/agent:dev
PORT=8080
kubectl() { "${KUBECTL}" --kubeconfig "${CLUSTER_KUBECONFIG}" "$@"; }

mapfile -t nodes < <(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort)
if [ ${#nodes[@]} -lt 2 ]; then
	log "smoke-nodes.sh needs at least 2 nodes, the cluster has ${#nodes[@]} (NODES=3 hack/cluster/up.sh)"
	exit 1
fi
# Default server: the first worker, so that with NODES=3 the last node's
# client crosses from one worker namespace into another.
SERVER_NODE="${SERVER_NODE:-$(worker_name 2)}"

# Waits, so that a down.sh right after finds no pod still terminating.
cleanup() { kubectl delete namespace "${NS}" --timeout=90s >/dev/null 2>&1 || true; }
trap cleanup EXIT
kubectl delete namespace "${NS}" --ignore-not-found --wait=true >/dev/null
kubectl create namespace "${NS}" >/dev/null

# One line per connection: "server=<node> peer=<address it saw>".
kubectl -n "${NS}" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: server, labels: {app: smoke-server}}
spec:
  nodeName: ${SERVER_NODE}
  # perl as PID 1 ignores SIGTERM; do not wait 30 s for it at cleanup.
  terminationGracePeriodSeconds: 1
  containers:
  - name: server
    image: ${IMAGE}
    imagePullPolicy: Never
    command: [perl, -MIO::Socket::INET, -e]
    args:
    - |
      my \$s = IO::Socket::INET->new(LocalPort => ${PORT}, Listen => 16, ReuseAddr => 1) or die "listen: \$!";
      while (my \$c = \$s->accept) { print \$c "server=\$ENV{NODE_NAME} peer=" . \$c->peerhost . "\n"; close \$c; }
    env:
    - name: NODE_NAME
      valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
    ports: [{containerPort: ${PORT}}]
    readinessProbe: {tcpSocket: {port: ${PORT}}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: smoke}
spec:
  selector: {app: smoke-server}
  ports: [{port: ${PORT}, targetPort: ${PORT}}]
EOF
kubectl -n "${NS}" wait --for=condition=Ready pod/server --timeout=120s >/dev/null
server_ip=$(kubectl -n "${NS}" get pod server -o jsonpath='{.status.podIP}')
svc_ip=$(kubectl -n "${NS}" get service smoke -o jsonpath='{.spec.clusterIP}')
svc_dns="smoke.${NS}.svc.${CLUSTER_DOMAIN}"
log "server on ${SERVER_NODE} at ${server_ip}:${PORT}, Service ${svc_ip} (${svc_dns})"

for i in "${!nodes[@]}"; do
	kubectl -n "${NS}" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: client-${i}}
spec:
  nodeName: ${nodes[${i}]}
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: client
    image: ${IMAGE}
    imagePullPolicy: Never
    command: [bash, -c]
    args:
    - |
      for target in ${server_ip} ${svc_ip} ${svc_dns}; do
        if exec 3<>/dev/tcp/\${target}/${PORT} && read -r -t 10 line <&3; then
          echo "\${target} \${line}"
        else
          echo "\${target} FAILED"
        fi
        exec 3<&-
      done
EOF
done

failed=0
for i in "${!nodes[@]}"; do
	if ! kubectl -n "${NS}" wait --for=jsonpath='{.status.phase}'=Succeeded "pod/client-${i}" --timeout=120s >/dev/null; then
		log "client on ${nodes[${i}]} did not succeed:"
		kubectl -n "${NS}" describe pod "client-${i}" | tail -15 >&2
		failed=1
		continue
	fi
	client_ip=$(kubectl -n "${NS}" get pod "client-${i}" -o jsonpath='{.status.podIP}')
	out=$(kubectl -n "${NS}" logs "client-${i}")
	for target in "${server_ip}" "${svc_ip}" "${svc_dns}"; do
		want="${target} server=${SERVER_NODE} peer=${client_ip}"
		if grep -qxF "${want}" <<<"${out}"; then
			printf '%-16s %-15s -> %-40s ok (%s)\n' "${nodes[${i}]}" "${client_ip}" "${target}" "${want#"${target} "}"
		else
			printf '%-16s %-15s -> %-40s FAILED: got "%s"\n' "${nodes[${i}]}" "${client_ip}" "${target}" \
				"$(grep -F "${target} " <<<"${out}" || echo nothing)"
			failed=1
		fi
	done
done
[ "${failed}" = 0 ] && log "pod network across ${#nodes[@]} nodes: ok"
exit "${failed}"
