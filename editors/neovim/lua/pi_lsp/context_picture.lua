--- :PiContext: the context at a glance in a floating window (pi/contextBreakdown):
--- a text bar per kind (category, tokens, share of the context), the free space up
--- to Pi's compaction threshold, the largest entries (<CR> shows one in :PiTree),
--- and a sparkline of the context's size along the session's path with its
--- compactions, branch summaries and context edits marked. r refreshes, q closes.
local M = {}

local ui = require('pi_lsp.ui')

local BUF_NAME = 'pi://context-picture'
local BAR = 24
local LARGEST = 10
local SPARKS = { '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█' }
--- The marker of each event under the sparkline.
M.MARKS = { compaction = 'C', branch_summary = 'B', context_edit = 'E' }

--- Per buffer: client id, session, entries by line, the last result.
---@type table<integer, {client_id: integer, session?: string, items: table<integer, table>, result?: table}>
M.buffers = {}

local function pct(n, total)
  if type(total) ~= 'number' or total <= 0 then
    return 0
  end
  return 100 * n / total
end

local function bar(share)
  local n = math.floor(share / 100 * BAR + 0.5)
  n = math.max(0, math.min(BAR, n))
  return string.rep('█', n) .. string.rep('·', BAR - n)
end

--- The sparkline of a history: one column per point (the largest of a bucket when
--- there are more points than columns), and the line of event markers under it.
---@return string spark, string marks
function M.sparkline(history, width)
  local n = #history
  if n == 0 then
    return '', ''
  end
  local cols = math.max(1, math.min(n, width))
  local top = 0
  for _, p in ipairs(history) do
    top = math.max(top, tonumber(p.tokens) or 0)
  end
  local spark, marks = {}, {}
  for c = 1, cols do
    local from = math.floor((c - 1) * n / cols) + 1
    local to = math.max(from, math.floor(c * n / cols))
    local v, mark = 0, ' '
    for i = from, to do
      local p = history[i]
      v = math.max(v, tonumber(p.tokens) or 0)
      local ev = type(p.event) == 'string' and M.MARKS[p.event]
      if ev and (mark == ' ' or ev == 'C') then
        mark = ev
      end
    end
    local level = top > 0 and math.floor(v / top * (#SPARKS - 1) + 0.5) + 1 or 1
    spark[#spark + 1] = SPARKS[level]
    marks[#marks + 1] = mark
  end
  return table.concat(spark), (table.concat(marks):gsub('%s+$', ''))
end

--- The lines of a pi/contextBreakdown result (with its history), and the entries by line.
---@return string[] lines, table<integer, table> items
function M.render(result, width)
  width = width or 80
  local human = ui.human
  local total, window = tonumber(result.total) or 0, tonumber(result.contextWindow) or 0
  local threshold = tonumber(result.threshold)
  local lines = {
    ('Pi context: ~%s tokens (Pi\'s estimate), %.1f%% of the %s window'):format(human(total), pct(total, window), human(window)),
  }
  local function add(s)
    lines[#lines + 1] = s
  end
  if tonumber(result.usageTokens) then
    add(('Last reply\'s usage: %s tokens'):format(human(result.usageTokens)))
  else
    add('Last reply\'s usage: none to trust (after a compaction or a context edit, or none yet)')
  end
  if threshold then
    add(('Pi compacts above %s tokens (reserve %s): %s to go'):format(human(threshold), human(result.reserveTokens),
      human(math.max(0, threshold - total))))
  else
    add('Automatic compaction is off')
  end
  add('<CR> show an entry in the tree   r refresh   q close')
  add('')
  add('What fills it')
  local kw = 12
  for _, k in ipairs(result.kinds or {}) do
    kw = math.max(kw, #tostring(k.kind))
  end
  for _, k in ipairs(result.kinds or {}) do
    local share = pct(k.tokens, total)
    add(('  %-' .. kw .. 's %7s %5.1f%%  %s  %d entr%s'):format(k.kind, human(k.tokens), share, bar(share), k.entries,
      k.entries == 1 and 'y' or 'ies'))
  end
  add(('  %-' .. kw .. 's %7s %5.1f%%  (of the window)'):format('total', human(total), pct(total, window)))
  if threshold then
    add(('  %-' .. kw .. 's %7s %5.1f%%  (of the window, up to the threshold)'):format('free', human(math.max(0, threshold - total)),
      pct(math.max(0, threshold - total), window)))
  end
  add(('  %-' .. kw .. 's %7s %5.1f%%  (of the window)'):format('reserve', human(result.reserveTokens), pct(result.reserveTokens, window)))

  add('')
  add('Largest entries')
  local items = {}
  local all = {}
  for _, k in ipairs(result.kinds or {}) do
    for _, e in ipairs(k.largest or {}) do
      all[#all + 1] = { entryId = e.entryId, tokens = e.tokens, preview = e.preview, kind = k.kind }
    end
  end
  table.sort(all, function(a, b)
    return a.tokens > b.tokens
  end)
  for i = 1, math.min(LARGEST, #all) do
    local e = all[i]
    local head = ('  %7s  %s  %-' .. kw .. 's  '):format(human(e.tokens), tostring(e.entryId), e.kind)
    add(head .. ui.one_line(e.preview, math.max(10, width - vim.fn.strdisplaywidth(head) - 2)))
    items[#lines] = e
  end
  if #all == 0 then
    add('  (empty context)')
  end

  local history = type(result.history) == 'table' and result.history or {}
  add('')
  add(('Size over the path: %d points (C compaction, B branch summary, E context edit)'):format(#history))
  if #history > 0 then
    local spark, marks = M.sparkline(history, math.max(10, width - 4))
    add('  ' .. spark)
    if marks ~= '' then
      add('  ' .. marks)
    end
    local top, last = 0, history[#history]
    for _, p in ipairs(history) do
      top = math.max(top, tonumber(p.tokens) or 0)
    end
    add(('  peak %s, now %s (%s)'):format(human(top), human(last.tokens), last.source == 'usage' and 'usage' or 'estimate'))
    for _, p in ipairs(history) do
      if p.event == 'compaction' and tonumber(p.tokensBefore) then
        add(('  compaction %s: %s → %s'):format(tostring(p.entryId), human(p.tokensBefore), human(p.tokens)))
        items[#lines] = p
      end
    end
  end
  return lines, items
end

local function paint(buf, result)
  local win = ui.buf_win(buf)
  local width = win and vim.api.nvim_win_get_width(win) or vim.o.columns
  local lines, items = M.render(result, width)
  local b = M.buffers[buf]
  b.items, b.result, b.session = items, result, result.session or b.session
  ui.set_lines(buf, lines)
end

--- The line of entry `id` in a picture buffer.
function M.line_of(buf, id)
  local b = M.buffers[buf]
  for lnum, it in pairs(b and b.items or {}) do
    if it.entryId == id then
      return lnum
    end
  end
end

local function request(client, session, cb)
  require('pi_lsp.client').request(client, 'pi/contextBreakdown', { session = session, history = true }, cb)
end

--- Re-reads the picture shown in `buf`.
function M.refresh(buf, cb)
  local b = M.buffers[buf]
  local client = ui.client_of(b)
  if not client then
    return
  end
  request(client, b.session, function(err, result)
    if err or type(result) ~= 'table' then
      ui.notify('context: ' .. require('pi_lsp.client').format_error(err or 'no result'), vim.log.levels.ERROR)
    elseif vim.api.nvim_buf_is_valid(buf) then
      paint(buf, result)
    end
    if cb then
      cb(err, result)
    end
  end)
end

-- Closes the float and opens the tree with the cursor on the entry under the cursor.
local function show_in_tree(buf)
  local b = M.buffers[buf]
  local it = b and b.items[vim.api.nvim_win_get_cursor(0)[1]]
  if not it then
    return
  end
  ui.close(buf)
  require('pi_lsp.commands').tree(nil, function(terr, tbuf)
    local lnum = not terr and tbuf and require('pi_lsp.tree').line_of(tbuf, it.entryId)
    local win = lnum and ui.buf_win(tbuf)
    if win then
      pcall(vim.api.nvim_win_set_cursor, win, { lnum, 0 })
    end
    pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'PiContextJump', modeline = false,
      data = { entryId = it.entryId, line = lnum, bufnr = tbuf } })
  end)
end

--- Opens the picture of `session` (nil: the current one) in a floating window.
---@param cb? fun(err?: any, buf?: integer, result?: table)
function M.open(session, cb)
  local c = require('pi_lsp.client')
  c.ensure(0, function(client, msg)
    local function done(err, buf, result)
      pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'PiCommandDone', modeline = false,
        data = { command = 'pi.contextBreakdown', result = result, error = err, client_id = client and client.id, bufnr = buf } })
      if cb then
        cb(err, buf, result)
      end
    end
    if not client then
      ui.notify(msg, vim.log.levels.ERROR)
      return done({ code = -32803, message = msg, data = { kind = 'client' } })
    end
    request(client, session, function(err, result)
      if err or type(result) ~= 'table' then
        ui.notify('context: ' .. c.format_error(err or 'no result'), vim.log.levels.ERROR)
        return done(err or 'no result')
      end
      local buf = ui.scratch(BUF_NAME, {}, { layout = 'float', title = 'Pi context', filetype = 'pi_lsp_context', width = 0.9, height = 0.85 })
      if ui.track(M.buffers, buf, { client_id = client.id, session = result.session or session, items = {} }) then
        ui.keymaps(buf, {
          { 'r', M.refresh, 'Pi: refresh' },
          { '<CR>', show_in_tree, 'Pi: show this entry in the tree' },
        })
      end
      paint(buf, result)
      done(nil, buf, result)
    end)
  end)
end

--- Refreshes open pictures of a client when its session changes.
function M.on_session_changed(client_id, params)
  ui.refresh_on_session_change(M.buffers, client_id, params, function(buf)
    M.refresh(buf)
  end)
end

return M
