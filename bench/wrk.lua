-- wrk script of npm run bench: every request names a random key out of `keys` (<prefix>0 ..
-- <prefix><keys-1>) as /v1/cache/<prefix><n><suffix>; PUT sends a body of `value_bytes` bytes;
-- a non-empty token is sent as a bearer; a non-empty header ("Name: value") is sent as well.
-- Arguments (after --): method keys value_bytes [token [prefix [suffix [header]]]]
local method, keys, body, prefix, suffix = "GET", 10000, nil, "bench-", ""
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
  if args[5] ~= nil and args[5] ~= "" then
    prefix = args[5]
  end
  if args[6] ~= nil then
    suffix = args[6]
  end
  if args[7] ~= nil and args[7] ~= "" then
    local name, value = string.match(args[7], "^([^:]+):%s*(.*)$")
    headers[name] = value
  end
  math.randomseed(os.time())
end

function request()
  return wrk.format(method, "/v1/cache/" .. prefix .. math.random(0, keys - 1) .. suffix, headers, body)
end
