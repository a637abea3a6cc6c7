--- Scratch buffers, windows and messages.
local M = {}

function M.notify(msg, level)
  if level and level >= vim.log.levels.WARN or require('pi_lsp.config').options.notify then
    vim.notify('pi-lsp: ' .. msg, level or vim.log.levels.INFO)
  end
end

--- Replaces the lines of a read-only scratch buffer.
function M.set_lines(buf, lines)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
end

--- The loaded buffer named `name`, if any.
function M.find_buf(name)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_valid(b) and vim.api.nvim_buf_get_name(b) == name then
      return b
    end
  end
end

--- The window showing `buf` in the current tab, if any.
function M.buf_win(buf)
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(w) == buf then
      return w
    end
  end
end

local function open_window(buf, opts)
  local layout = opts.layout or 'split'
  if layout == 'float' then
    local cols, rows = vim.o.columns, vim.o.lines - vim.o.cmdheight - 1
    local width = math.max(20, math.floor(cols * (opts.width or 0.8)))
    local height = math.max(5, math.floor(rows * (opts.height or 0.8)))
    local wopts = {
      relative = 'editor',
      width = math.min(width, cols),
      height = math.min(height, rows),
      row = math.max(0, math.floor((rows - height) / 2)),
      col = math.max(0, math.floor((cols - width) / 2)),
      style = 'minimal',
      border = opts.border or 'rounded',
    }
    if opts.title then
      wopts.title = ' ' .. opts.title .. ' '
      wopts.title_pos = 'center'
    end
    return vim.api.nvim_open_win(buf, true, wopts)
  end
  if layout == 'vsplit' then
    vim.cmd('botright vsplit')
  elseif layout == 'tab' then
    vim.cmd('tabnew')
  else
    vim.cmd('botright split')
    if opts.split_height then
      vim.cmd('resize ' .. opts.split_height)
    end
  end
  local win = vim.api.nvim_get_current_win()
  local scratch = vim.api.nvim_get_current_buf()
  vim.api.nvim_win_set_buf(win, buf)
  if layout == 'tab' and scratch ~= buf and vim.api.nvim_buf_is_valid(scratch)
    and vim.api.nvim_buf_get_name(scratch) == '' and not vim.bo[scratch].modified then
    pcall(vim.api.nvim_buf_delete, scratch, { force = true })
  end
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].wrap = false
  vim.wo[win].spell = false
  vim.wo[win].signcolumn = 'no'
  return win
end
M.open_window = open_window

--- Shows `lines` in a named read-only scratch buffer (reused when it exists)
--- and focuses its window. `q` closes it.
---@param name string buffer name, e.g. "pi://context"
---@param lines string[]
---@param opts {layout?: string, filetype?: string, title?: string, width?: number, height?: number, border?: any, split_height?: integer}
---@return integer buf, integer win
function M.scratch(name, lines, opts)
  opts = opts or {}
  local buf = M.find_buf(name)
  if not buf then
    buf = vim.api.nvim_create_buf(false, true)
    vim.bo[buf].buftype = 'nofile'
    vim.bo[buf].bufhidden = 'wipe'
    vim.bo[buf].swapfile = false
    vim.api.nvim_buf_set_name(buf, name)
    if opts.filetype then
      vim.bo[buf].filetype = opts.filetype
    end
    vim.keymap.set('n', 'q', function()
      M.close(buf)
    end, { buffer = buf, nowait = true, silent = true, desc = 'Close' })
  end
  M.set_lines(buf, lines)
  local win = M.buf_win(buf)
  if win then
    vim.api.nvim_set_current_win(win)
  else
    win = open_window(buf, opts)
  end
  return buf, win
end

--- Sets registry[buf] = state; the first time (registry[buf] was nil), also drops the entry
--- when buf is wiped out. Returns true that first time, for the caller's one-time setup
--- (keymaps) of a new buffer.
---@param registry table<integer, table>
---@param buf integer
---@param state table
---@return boolean new
function M.track(registry, buf, state)
  local new = registry[buf] == nil
  registry[buf] = state
  if new then
    vim.api.nvim_create_autocmd('BufWipeout', {
      buffer = buf,
      once = true,
      callback = function()
        registry[buf] = nil
      end,
    })
  end
  return new
end

--- The LSP client of a tracked buffer's state (its client_id), while it runs; nil otherwise.
---@param state? {client_id: integer}
function M.client_of(state)
  return state and vim.lsp.get_client_by_id(state.client_id) or nil
end

local refresh_pending = {}

--- After client_id's session changed (params: the pi/sessionChanged params, or nil for any
--- session), calls refresh(buf) for each buffer of registry that shows that session, 100 ms
--- later and once for the changes that come in that time.
---@param registry table<integer, {client_id: integer, session?: string}>
---@param refresh fun(buf: integer)
function M.refresh_on_session_change(registry, client_id, params, refresh)
  for buf, b in pairs(registry) do
    if b.client_id == client_id and (not params or not b.session or params.session == b.session) and not refresh_pending[buf] then
      refresh_pending[buf] = true
      vim.defer_fn(function()
        refresh_pending[buf] = nil
        if vim.api.nvim_buf_is_valid(buf) then
          refresh(buf)
        end
      end, 100)
    end
  end
end

--- Buffer-local normal-mode keymaps: each of maps is { lhs, fn, desc }, and fn is called
--- with buf.
---@param buf integer
---@param maps {[1]: string, [2]: fun(buf: integer), [3]: string}[]
function M.keymaps(buf, maps)
  for _, m in ipairs(maps) do
    local fn = m[2]
    vim.keymap.set('n', m[1], function()
      fn(buf)
    end, { buffer = buf, nowait = true, silent = true, desc = m[3] })
  end
end

--- Closes the windows of a scratch buffer (the buffer is wiped with them).
function M.close(buf)
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_is_valid(w) and vim.api.nvim_win_get_buf(w) == buf then
      if #vim.api.nvim_list_wins() > 1 then
        pcall(vim.api.nvim_win_close, w, true)
      else
        pcall(vim.cmd, 'enew')
      end
    end
  end
  if vim.api.nvim_buf_is_valid(buf) then
    pcall(vim.api.nvim_buf_delete, buf, { force = true })
  end
end

--- `s` on one line (newlines and runs of spaces folded), cut to `max` characters with an
--- ellipsis; anything but a string or a number (nil, a JSON null) gives "".
---@param s any
---@param max? integer
function M.one_line(s, max)
  if type(s) ~= 'string' and type(s) ~= 'number' then
    return ''
  end
  s = tostring(s):gsub('[\r\n\t]+', ' '):gsub('%s+', ' ')
  s = vim.trim(s)
  if max and vim.fn.strchars(s) > max then
    s = vim.fn.strcharpart(s, 0, max - 1) .. '…'
  end
  return s
end

--- "12.3k" for 12345.
function M.human(n)
  n = tonumber(n)
  if not n then
    return '?'
  end
  if n >= 1e6 then
    return ('%.1fM'):format(n / 1e6)
  elseif n >= 1000 then
    return ('%.1fk'):format(n / 1000)
  end
  return tostring(math.floor(n))
end

--- Splits text into lines.
function M.lines(text)
  if type(text) ~= 'string' or text == '' then
    return {}
  end
  return vim.split(text, '\n', { plain = true })
end


--- Fills a view module V of one session's context (V.buffers its registry) with what every
--- such view does alike: V.line_of, V.refresh, V.open (the PiCommandDone event, the client
--- check, the error notice) and V.on_session_changed, and gives its keymaps a show_in_tree.
--- spec: label (the notices' prefix), command (the PiCommandDone name), request(client,
--- session, cb), render(result, width) (the lines and the entries by line), first_line
--- (where the cursor goes at the least; nil: it stays), buf_name, window() (the ui.scratch options), keymaps(
--- show_in_tree) (the { lhs, fn, desc } list), float (close the view before the tree is
--- shown and fire User PiContextJump with the entry, its line and the tree's buffer).
function M.session_view(V, spec)
  local function paint(buf, result)
    local win = M.buf_win(buf)
    local width = win and vim.api.nvim_win_get_width(win) or vim.o.columns
    local lines, items = spec.render(result, width)
    local b = V.buffers[buf]
    b.items, b.result, b.session = items, result, result.session or b.session
    local cursor = win and vim.api.nvim_win_get_cursor(win) or nil
    M.set_lines(buf, lines)
    if win and spec.first_line then
      pcall(vim.api.nvim_win_set_cursor, win, { math.max(cursor[1], spec.first_line), 0 })
    end
  end

  --- The line of entry `id` in a buffer of this view.
  function V.line_of(buf, id)
    local b = V.buffers[buf]
    for lnum, it in pairs(b and b.items or {}) do
      if it.entryId == id then
        return lnum
      end
    end
  end

  local function failed(err)
    M.notify(spec.label .. ': ' .. require('pi_lsp.client').format_error(err or 'no result'), vim.log.levels.ERROR)
  end

  --- Re-reads the view shown in `buf`.
  function V.refresh(buf, cb)
    local b = V.buffers[buf]
    local client = M.client_of(b)
    if not client then
      return
    end
    spec.request(client, b.session, function(err, result)
      if err or type(result) ~= 'table' then
        failed(err)
      elseif vim.api.nvim_buf_is_valid(buf) then
        paint(buf, result)
      end
      if cb then
        cb(err, result)
      end
    end)
  end

  -- Opens the tree with the cursor on the entry under the cursor.
  local function show_in_tree(buf)
    local b = V.buffers[buf]
    local it = b and b.items[vim.api.nvim_win_get_cursor(0)[1]]
    if not it then
      return
    end
    if spec.float then
      M.close(buf)
    end
    require('pi_lsp.commands').tree(nil, function(terr, tbuf)
      local lnum = not terr and tbuf and require('pi_lsp.tree').line_of(tbuf, it.entryId)
      local win = lnum and M.buf_win(tbuf)
      if win then
        pcall(vim.api.nvim_win_set_cursor, win, { lnum, 0 })
      end
      if spec.float then
        pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'PiContextJump', modeline = false,
          data = { entryId = it.entryId, line = lnum, bufnr = tbuf } })
      end
    end)
  end

  --- Opens the view of `session` (nil: the current one).
  ---@param cb? fun(err?: any, buf?: integer, result?: table)
  function V.open(session, cb)
    require('pi_lsp.client').ensure(0, function(client, msg)
      local function done(err, buf, result)
        pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'PiCommandDone', modeline = false,
          data = { command = spec.command, result = result, error = err, client_id = client and client.id, bufnr = buf } })
        if cb then
          cb(err, buf, result)
        end
      end
      if not client then
        M.notify(msg, vim.log.levels.ERROR)
        return done({ code = -32803, message = msg, data = { kind = 'client' } })
      end
      spec.request(client, session, function(err, result)
        if err or type(result) ~= 'table' then
          failed(err)
          return done(err or 'no result')
        end
        local buf = M.scratch(spec.buf_name, {}, spec.window())
        if M.track(V.buffers, buf, { client_id = client.id, session = result.session or session, items = {} }) then
          M.keymaps(buf, spec.keymaps(show_in_tree))
        end
        paint(buf, result)
        done(nil, buf, result)
      end)
    end)
  end

  --- Refreshes the open views of a client when its session changes.
  function V.on_session_changed(client_id, params)
    M.refresh_on_session_change(V.buffers, client_id, params, function(buf)
      V.refresh(buf)
    end)
  end
end

return M
