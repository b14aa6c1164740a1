# shellcheck shell=bash
# Sourced by scripts/bench: the Redis state engine's targets (issue 11, item 9).
#
#   redis-engine    three pagesyncd sharing their rooms through one redis-server (--redis).
#                   Fan-out: the followers are spread over the three daemons (one worker per
#                   daemon) and the driver turns pages on the first, so every change crosses
#                   Redis (script + PUBLISH) before two thirds of the followers get it.
#                   Durable: the clients are spread over the three daemons, one room each.
#   redis-engine-1  one pagesyncd with --redis (the engine's cost without the spread).
#
# Compare with pagesyncd (one daemon, journal) and redis (redis-server pub/sub and SET used
# directly) in the same run. Uses from scripts/bench: BENCH DAEMON DOC ROOM_DOCS TMP PRIO PIDS
# say wait_port.

declare -A ENGINE_PORTS ENGINE_PIDS

is_engine_label() { case "$1" in redis-engine|redis-engine-1) return 0 ;; *) return 1 ;; esac; }

# Starts redis-server and the label's daemons; sets SPID (the first daemon), SPORT (its port),
# ENGINE_PORTS[label] (every daemon's port, comma-separated) and ENGINE_PIDS[label] (every PID).
# Returns 2 when redis-server is not installed, 1 when something did not start.
start_redis_engine() {  # label run log
    local label=$1 run=$2 log=$3 count=3
    [ "$label" = redis-engine-1 ] && count=1
    command -v redis-server >/dev/null 2>&1 || return 2
    local rport rpid
    rport=$("$BENCH" free-port)
    mkdir -p "$TMP/state-$label-$run"
    "${PRIO[@]}" redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --dir "$TMP/state-$label-$run" \
        --maxclients 20000 --daemonize no --logfile "$log.redis" &
    rpid=$!
    PIDS+=("$rpid")
    if ! wait_port "$rport" "$rpid"; then say "$label: redis-server did not start"; return 1; fi
    local ports=() pids=("$rpid") i port pid
    for i in $(seq 1 "$count"); do
        port=$("$BENCH" free-port)
        "${PRIO[@]}" "$DAEMON" "$DOC" "${ROOM_DOCS[@]}" --wrap --redis "redis://127.0.0.1:$rport" --redis-prefix "bench:" \
            --listen "127.0.0.1:$port" --state-dir "$TMP/state-$label-$run" --max-clients 20000 \
            --max-clients-per-address 20000 --log-level warning 2>"$log.$i" &
        pid=$!
        PIDS+=("$pid")
        pids+=("$pid")
        if ! wait_port "$port" "$pid"; then say "$label: daemon $i did not start; its log:"; tail -5 "$log.$i" >&2 || true; return 1; fi
        ports+=("$port")
    done
    SPID=${pids[1]}
    SPORT=${ports[0]}
    ENGINE_PORTS[$label]=$(IFS=,; echo "${ports[*]}")
    ENGINE_PIDS[$label]="${pids[*]}"
}

# Extra `pagesync-bench run` arguments for a label: engine targets spread their followers
# (and report no server RSS: it is spread too); others name their server's PID.
engine_run_args() {  # label pid
    if is_engine_label "$1"; then
        local ports=${ENGINE_PORTS[$1]}
        echo "--follower-ports $ports --workers $(( $(tr -cd , <<< "$ports" | wc -c) + 1 ))"
    else
        echo "--server-pid $2"
    fi
}

# Extra `pagesync-bench durable` arguments: engine targets spread their clients.
engine_durable_args() {  # label
    if is_engine_label "$1"; then echo "--ports ${ENGINE_PORTS[$1]}"; fi
}

# Stops every process of a label (engine targets: the daemons, then redis-server).
stop_label() {  # label pid
    if is_engine_label "$1"; then
        local pid all
        read -r -a all <<< "${ENGINE_PIDS[$1]}"
        for pid in "${all[@]:1}" "${all[0]}"; do stop "$pid"; done
    else
        stop "$2"
    fi
}

# `pagesync-bench report` arguments that place the engine's columns and give its ratios
# (issue 11's goals: redis-engine/pagesyncd fan-out p99 at N=1000 <= 1.5; redis-engine/redis
# durable changes/s with 60 clients >= 0.25).
ENGINE_REPORT_ARGS=(
    --columns "pagesyncd,pagesyncd-always,pre-nofsync,pre-fsync,redis-engine,redis-engine-1,redis,nats,floor"
    --durable-columns "pagesyncd,pre-fsync,pagesyncd-always,redis-engine,redis-engine-1,redis,redis-always"
    --durable-ratios "pagesyncd/redis,pre-fsync/redis,pagesyncd-always/redis-always,pagesyncd/pre-fsync,redis-engine/redis,redis-engine-1/redis"
    --fanout-pairs "redis-engine/pagesyncd,redis-engine-1/pagesyncd,redis-engine/redis"
)
