-- wrk script: POSTs $SOAK_BODY to $SOAK_PATH (/run) and counts the answers by status.
-- done() prints "status <code> <count>" lines, the socket error counts and the total.
wrk.method = "POST"
wrk.path = os.getenv("SOAK_PATH") or "/run"
wrk.body = os.getenv("SOAK_BODY") or '{"value":{}}'
wrk.headers["Content-Type"] = "application/json"

local threads = {}

function setup(thread)
    table.insert(threads, thread)
end

function init(args)
    statuses = {}
end

function response(status, headers, body)
    statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
    local total = {}
    for _, thread in ipairs(threads) do
        for code, count in pairs(thread:get("statuses")) do
            total[code] = (total[code] or 0) + count
        end
    end
    for code, count in pairs(total) do
        io.write(string.format("status %d %d\n", code, count))
    end
    local e = summary.errors
    io.write(string.format("errors connect %d read %d write %d status %d timeout %d\n",
                           e.connect, e.read, e.write, e.status, e.timeout))
    io.write(string.format("requests %d\n", summary.requests))
    io.write(string.format("latency p50_ms %.2f p99_ms %.2f max_ms %.2f\n",
                           latency:percentile(50) / 1000, latency:percentile(99) / 1000,
                           latency.max / 1000))
end
