#!/usr/bin/env bash
# images-smoke.sh checks that each database image honours the official
# images' contract the way the operator uses it: one pod per image in the
# local cluster, with the operator's security context (uid/gid 999, fsGroup
# 999, no privilege escalation, all capabilities dropped), emptyDirs for the
# data and socket directories, credentials from the environment and the config
# file mounted where pkg/specs mounts it (subPath); then a
# SQL query over TCP to the pod IP with those credentials, which must see the
# drop-in's setting. The query comes from a second pod (same image, sleeping),
# across the bridge, as the benchmark client's queries do.
#
#   hack/images-smoke.sh                     # every database image
#   hack/images-smoke.sh mariadb:10.11 postgres:17
#
# Needs the cluster (hack/cluster/up.sh) and the images (hack/images.sh).
# Uses KUBECONFIG if set, else the local cluster's. Deletes its namespace on
# success; on failure it prints the pods' logs and keeps the namespace.
source "$(dirname "$0")/lib.sh"
source "${DBBENCH_ROOT}/hack/cluster/env.sh"

export KUBECONFIG="${KUBECONFIG:-${CLUSTER_KUBECONFIG}}"
KUBECTL_BIN="${KUBECTL_BIN:-$(command -v "${KUBECTL}" || command -v kubectl)}"
kubectl() { "${KUBECTL_BIN}" "$@"; }
NS=dbbench-smoke
TIMEOUT="${SMOKE_TIMEOUT:-300}"
IMAGES=("$@")
[ ${#IMAGES[@]} -gt 0 ] || IMAGES=(mariadb:10.5 mariadb:10.11 mariadb:11.8 postgres:13 postgres:15 postgres:17 mysql:9.7)

# The value the config drop-in sets, and the query that must return it.
MAX_CONN=123

pod_yaml() {
	local name=$1 image=$2 engine=${2%%:*} env mounts args=""
	case "${engine}" in
	mariadb | mysql)
		local p=MARIADB
		[ "${engine}" = mysql ] && p=MYSQL
		env="
    - {name: ${p}_ROOT_PASSWORD, value: root-pw}
    - {name: ${p}_USER, value: dbbench}
    - {name: ${p}_PASSWORD, value: \"dbbench pw'1\"}
    - {name: ${p}_DATABASE, value: sbtest}"
		mounts="
    - {name: data, mountPath: /var/lib/mysql}
    - {name: config, mountPath: /etc/mysql/conf.d/zz-dbbench.cnf, subPath: server.cnf, readOnly: true}
    - {name: run, mountPath: /run/mysqld}"
		;;
	postgres)
		env="
    - {name: POSTGRES_USER, value: dbbench}
    - {name: POSTGRES_PASSWORD, value: \"dbbench pw'1\"}
    - {name: POSTGRES_DB, value: sbtest}
    - {name: PGDATA, value: /var/lib/postgresql/data/pgdata}"
		mounts="
    - {name: data, mountPath: /var/lib/postgresql/data}
    - {name: config, mountPath: /etc/dbbench/config/postgresql.conf, subPath: postgresql.conf, readOnly: true}
    - {name: run, mountPath: /var/run/postgresql}"
		args="
    args: [-c, 'listen_addresses=*', -c, config_file=/etc/dbbench/config/postgresql.conf]"
		;;
	esac
	cat <<EOF
apiVersion: v1
kind: ConfigMap
metadata: {name: ${name}, namespace: ${NS}}
data:
  server.cnf: |
    [mysqld]
    max_connections = ${MAX_CONN}
  postgresql.conf: |
    max_connections = ${MAX_CONN}
---
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${NS}, labels: {app: dbbench-smoke}}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 5
  securityContext: {runAsUser: 999, runAsGroup: 999, fsGroup: 999, runAsNonRoot: true}
  containers:
  - name: db
    image: docker.io/library/${image}
    imagePullPolicy: Never${args}
    env:${env}
    securityContext:
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL]}
    volumeMounts:${mounts}
  volumes:
  - {name: data, emptyDir: {}}
  - {name: run, emptyDir: {}}
  - {name: config, configMap: {name: ${name}}}
---
# The client: the same image (it has the engine's own client), in another
# pod, so the query crosses the bridge as the benchmark client's does.
apiVersion: v1
kind: Pod
metadata: {name: ${name}-client, namespace: ${NS}, labels: {app: dbbench-smoke}}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 0
  securityContext: {runAsUser: 65532, runAsGroup: 65532, runAsNonRoot: true}
  containers:
  - name: client
    image: docker.io/library/${image}
    imagePullPolicy: Never
    command: [sleep, infinity]
    securityContext:
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL]}
EOF
}

# query NAME IMAGE: a query from the client pod over TCP to the server pod's
# IP with the env credentials; prints "version|max_connections".
query() {
	local name=$1 engine=${2%%:*} ip
	ip=$(kubectl -n "${NS}" get pod "${name}" -o 'jsonpath={.status.podIP}')
	[ -n "${ip}" ] || return 1
	case "${engine}" in
	mariadb)
		kubectl -n "${NS}" exec "${name}-client" -- mariadb -h "${ip}" -P 3306 -u dbbench "-pdbbench pw'1" sbtest -N -B \
			-e "SELECT CONCAT(VERSION(), '|', @@max_connections)" 2>/dev/null
		;;
	mysql)
		kubectl -n "${NS}" exec "${name}-client" -- mysql -h "${ip}" -P 3306 -u dbbench "-pdbbench pw'1" sbtest -N -B \
			-e "SELECT CONCAT(VERSION(), '|', @@max_connections)" 2>/dev/null
		;;
	postgres)
		kubectl -n "${NS}" exec "${name}-client" -- env "PGPASSWORD=dbbench pw'1" psql -h "${ip}" -p 5432 -U dbbench -d sbtest \
			-At -c "SELECT current_setting('server_version') || '|' || current_setting('max_connections')" 2>/dev/null
		;;
	esac
}

kubectl create namespace "${NS}" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
declare -A NAMES=()
for image in "${IMAGES[@]}"; do
	name="smoke-${image//[:.]/-}"
	NAMES[${image}]=${name}
	pod_yaml "${name}" "${image}" | kubectl apply -f - >/dev/null
done
log "started ${#IMAGES[@]} database pods in namespace ${NS}; waiting up to ${TIMEOUT}s for SQL answers"

start=${SECONDS}
declare -A DONE=()
failed=0
while [ ${#DONE[@]} -lt ${#IMAGES[@]} ]; do
	for image in "${IMAGES[@]}"; do
		[ -n "${DONE[${image}]:-}" ] && continue
		name=${NAMES[${image}]}
		phase=$(kubectl -n "${NS}" get pod "${name}" -o 'jsonpath={.status.phase}' 2>/dev/null || true)
		if [ "${phase}" = Failed ] || [ "${phase}" = Succeeded ]; then
			log "FAIL ${image}: the server exited (${phase})"
			DONE[${image}]=fail
			failed=1
			continue
		fi
		if out=$(query "${name}" "${image}") && [ -n "${out}" ]; then
			if [ "${out##*|}" = "${MAX_CONN}" ]; then
				log "ok   ${image}: server ${out%%|*} answered a client pod over TCP after $((SECONDS - start))s (config drop-in applied)"
				DONE[${image}]=ok
			else
				log "FAIL ${image}: answered, but max_connections=${out##*|}, not ${MAX_CONN}: the config drop-in was ignored"
				DONE[${image}]=fail
				failed=1
			fi
		fi
	done
	if [ $((SECONDS - start)) -ge "${TIMEOUT}" ]; then
		for image in "${IMAGES[@]}"; do
			[ -n "${DONE[${image}]:-}" ] || { log "FAIL ${image}: no SQL answer within ${TIMEOUT}s"; DONE[${image}]=fail; failed=1; }
		done
	fi
	sleep 2
done

if [ "${failed}" -ne 0 ]; then
	for image in "${IMAGES[@]}"; do
		[ "${DONE[${image}]}" = ok ] && continue
		log "---- logs of ${NAMES[${image}]} (${image})"
		kubectl -n "${NS}" logs "${NAMES[${image}]}" --tail=30 >&2 || true
		kubectl -n "${NS}" describe pod "${NAMES[${image}]}" | tail -15 >&2 || true
	done
	log "keeping namespace ${NS} for inspection"
	exit 1
fi
kubectl delete namespace "${NS}" --wait=false >/dev/null
log "all ${#IMAGES[@]} database images passed"
