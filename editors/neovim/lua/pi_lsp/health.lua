--- :checkhealth pi_lsp — the server binary and its version, Pi's sessions
--- folder, and the running clients.
local M = {}

local health = vim.health

local function server_cmd()
  local client = require('pi_lsp.client').get(0)
  if client and type(client.config.cmd) == 'table' then
    return client.config.cmd, 'running client'
  end
  local cfg = require('pi_lsp.config')
  if cfg.options.cmd then
    return cfg.options.cmd, "setup({cmd})"
  end
  return cfg.cmd(), vim.lsp.config and 'vim.lsp.config' or 'default'
end

function M.check()
  local cfg = require('pi_lsp.config')

  health.start('pi_lsp: Neovim')
  local v = vim.version()
  local vs = ('%d.%d.%d'):format(v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok(('Neovim %s: vim.lsp.config / vim.lsp.enable with lsp/pi_lsp.lua'):format(vs))
  elseif vim.fn.has('nvim-0.10') == 1 then
    health.ok(('Neovim %s: use require("pi_lsp").setup()'):format(vs))
  else
    health.error(('Neovim %s is too old'):format(vs), { 'pi_lsp needs Neovim 0.10 or newer' })
  end

  health.start('pi_lsp: server')
  local cmd, source = server_cmd()
  if type(cmd) ~= 'table' or not cmd[1] then
    health.warn('the server command is a function; not checked')
  else
    local exe = vim.fn.exepath(cmd[1])
    if exe == '' then
      health.error(('server %q not found (command from %s)'):format(cmd[1], source), {
        'Build it with `make build` in the pi-lsp repository and put bin/ on $PATH,',
        "or pass the path: require('pi_lsp').setup({ cmd = { '/path/to/pi-lsp', 'serve' } })",
        "or vim.lsp.config('pi_lsp', { cmd = { '/path/to/pi-lsp', 'serve' } })",
      })
    else
      health.ok(('binary: %s (command: %s, from %s)'):format(exe, table.concat(cmd, ' '), source))
      local ok, res = pcall(function()
        return vim.system({ exe, 'version' }, { text = true }):wait(5000)
      end)
      if ok and res and res.code == 0 and vim.trim(res.stdout or '') ~= '' then
        health.ok('version: ' .. vim.trim(res.stdout))
      else
        local why = ok and res and (vim.trim(res.stderr or '') ~= '' and vim.trim(res.stderr) or ('exit ' .. tostring(res.code)))
          or tostring(res)
        health.error(('`%s version` failed: %s'):format(exe, why))
      end
    end
  end

  health.start('pi_lsp: Pi sessions')
  local agent = cfg.agent_dir()
  local env = os.getenv('PI_CODING_AGENT_DIR')
  health.info(('agent dir: %s%s'):format(agent, (env and env ~= '') and ' ($PI_CODING_AGENT_DIR)' or ''))
  local root = cfg.sessions_root()
  if vim.fn.isdirectory(root) == 1 then
    local n = 0
    for _, t in vim.fs.dir(root) do
      if t == 'directory' then
        n = n + 1
      end
    end
    health.ok(('sessions folder: %s (%d workspace%s)'):format(root, n, n == 1 and '' or 's'))
  else
    health.warn(('sessions folder %s does not exist'):format(root), {
      'Pi creates it on its first session; set $PI_CODING_AGENT_DIR if Pi uses another agent dir',
    })
  end
  local ws = cfg.find_root(0)
  local cwd = vim.fs.normalize(vim.fn.getcwd())
  if ws then
    local dir = cfg.sessions_dir(ws)
    health.ok(('workspace %s: %d session(s) in %s'):format(ws, cfg.count_sessions(dir), dir))
  else
    health.info(('no Pi sessions for %s (looked for %s and its parents)'):format(cwd, cfg.sessions_dir(cwd)))
  end

  health.start('pi_lsp: clients')
  local clients = vim.lsp.get_clients({ name = cfg.name })
  if #clients == 0 then
    health.info('no pi_lsp client is running')
  end
  for _, c in ipairs(clients) do
    local st = require('pi_lsp.handlers').state[c.id] or {}
    local info = c.server_info or {}
    health.ok(('client %d: %s %s, workspace %s, session %s'):format(
      c.id,
      info.name or 'pi-lsp',
      info.version or '',
      c.root_dir or '?',
      st.session or '(not reported yet)'
    ))
    local mismatch = require('pi_lsp.plugin').version_mismatch(info.version)
    if mismatch then
      health.warn(mismatch, { 'Rebuild the server (`make build` in the checkout) or update the plugin' })
    end
    local o = st.owner
    if type(o) == 'table' and o.bridge == true then
      health.ok(('live pi %d (Pi %s) holds the session with the pi-lsp bridge: compact, navigate and label go through it'):format(
        o.pid or 0,
        o.piVersion or '?'
      ))
    elseif type(o) == 'table' and o.pid then
      health.warn(('pi %d holds the session without the pi-lsp bridge: writes are refused'):format(o.pid), {
        'Load the extension in that pi: pi -e <pi-lsp>/editors/pi/extension.ts',
        'or install it once for every pi: pi install <pi-lsp>/editors/pi',
      })
    else
      health.info('no running pi holds the session (no bridge attached); pi-lsp writes it itself')
    end
    local sum = st.summarizer
    if type(sum) == 'table' then
      if sum.notice then
        health.warn(sum.notice, sum.fix and { sum.fix } or nil)
      elseif sum.kind == 'model' then
        health.ok(('%s%s'):format(sum.label or 'the session\'s model', sum.credential and (' (key: ' .. sum.credential .. ')') or ''))
      else
        health.info(sum.label or sum.kind)
      end
    else
      health.info('the summarizer is reported with the session (pi/sessionChanged)')
    end
  end
end

return M
