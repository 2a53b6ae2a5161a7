-- wrk script of npm run bench: every request names a random key out of `keys` (bench-0 ..
-- bench-<keys-1>); PUT sends a body of `value_bytes` bytes; a non-empty token is sent as a bearer.
-- Arguments (after --): method keys value_bytes [token]
local method, keys, body = "GET", 10000, nil
local headers = {}

function init(args)
  method = args[1] or "GET"
  keys = tonumber(args[2] or "10000")
  if method == "PUT" then
    body = string.rep("v", tonumber(args[3] or "100"))
    headers["Content-Type"] = "application/octet-stream"
  end
  if args[4] ~= nil and args[4] ~= "" then
    headers["Authorization"] = "Bearer " .. args[4]
  end
  math.randomseed(os.time())
end

function request()
  return wrk.format(method, "/v1/cache/bench-" .. math.random(0, keys - 1), headers, body)
end
