--- :PiTree: the session's entry tree in a buffer, the leaf marked.
---
--- A chain of single children stays at one indentation level (as Pi's own
--- /tree does); a branch point draws its children with ├─ / └─.
--- <CR> navigates to the entry under the cursor after a vim.ui.select choice
--- of no summary / summarize / summarize with instructions / summarize and
--- edit (the summary opens in a buffer; :w navigates and writes it).
--- P toggles the pin of the entry under the cursor; pinned entries show "⚑ pinned".
--- x hides the message under the cursor from the LLM context, e replaces its content
--- there (vim.ui.input), u restores it; such messages show "⊘ hidden" / "✎ replaced".
--- s opens the context by size (:PiContextBySize).
local M = {}

local ui = require('pi_lsp.ui')

local BUF_NAME = 'pi://tree'
--- Appended to the line of a pinned entry.
M.PIN_MARK = ' ⚑ pinned'
--- Appended to the line of a message hidden from, or replaced in, the context.
M.EDIT_MARKS = { omitted = ' ⊘ hidden', replaced = ' ✎ replaced' }
local HEADER_LINES = 3
local ns = vim.api.nvim_create_namespace('pi_lsp_tree')

--- Per tree buffer: client id, the nodes by line, the last result.
---@type table<integer, {client_id: integer, nodes: table<integer, table>, result: table, session?: string}>
M.buffers = {}

local one_line = require('pi_lsp.ui').one_line

local function kind(node)
  if node.type == 'message' and node.role then
    return node.role
  end
  return node.type or '?'
end

--- Renders a pi.tree result.
---@param result {session?: string, leafId?: string, roots: table[]}
---@param width? integer preview width budget
---@return string[] lines, table<integer, table> nodes_by_line, table[] highlights
function M.render(result, width)
  width = width or 100
  local lines, nodes, hls = {}, {}, {}
  local session = result.session and vim.fn.fnamemodify(result.session, ':t') or '?'
  lines[1] = ('Pi session %s   leaf %s'):format(session, result.leafId or '-')
  lines[2] = '<CR> navigate   l label   P pin   x hide   e replace   u restore   s by size   r refresh   q close'
  lines[3] = ''
  hls[#hls + 1] = { 0, 0, -1, 'Title' }
  hls[#hls + 1] = { 1, 0, -1, 'Comment' }

  -- Explicit stack: chains can be thousands of entries deep.
  local stack = {}
  local roots = result.roots or {}
  for i = #roots, 1, -1 do
    local last = i == #roots
    local multi = #roots > 1
    stack[#stack + 1] = {
      node = roots[i],
      prefix = '',
      conn = multi and (last and '└─ ' or '├─ ') or '',
      cont = multi and (last and '   ' or '│  ') or '',
    }
  end
  while #stack > 0 do
    local item = table.remove(stack)
    local node = item.node
    local marker = node.isLeaf and '●' or (node.onPath and '•' or ' ')
    local head = item.prefix .. item.conn
    local id = tostring(node.id or '?')
    local k = kind(node)
    local label = (type(node.label) == 'string' and node.label ~= '') and (' [' .. node.label .. ']') or ''
    local budget = math.max(10, width - vim.fn.strdisplaywidth(head) - #id - #k - #label - (node.pinned and 9 or 0) - 8)
    local preview = one_line(node.preview, budget)
    local pin = node.pinned == true and M.PIN_MARK or ''
    local edit = M.EDIT_MARKS[node.contextEdit] or ''
    local text = ('%s%s %s %s%s%s%s%s'):format(head, marker, id, k, preview ~= '' and (': ' .. preview) or '', label, pin, edit)
    if node.isLeaf then
      text = text .. '  ← leaf'
    end
    lines[#lines + 1] = text
    local lnum = #lines
    nodes[lnum] = node
    local row = lnum - 1
    local col = #head
    local group = node.isLeaf and 'PiTreeLeaf' or (node.onPath and 'PiTreeOnPath' or 'PiTreeOffPath')
    hls[#hls + 1] = { row, col, -1, group }
    hls[#hls + 1] = { row, col + #marker + 1, col + #marker + 1 + #id, 'PiTreeId' }
    local tail = node.isLeaf and #'  ← leaf' or 0
    if edit ~= '' then
      local s = #text - #edit - tail
      hls[#hls + 1] = { row, s, s + #edit, 'PiTreeEdited' }
    end
    if pin ~= '' then
      local s = #text - #pin - #edit - tail
      hls[#hls + 1] = { row, s, s + #pin, 'PiTreePinned' }
    end
    if label ~= '' then
      local s = #text - #label - #pin - #edit - tail
      hls[#hls + 1] = { row, s, s + #label, 'PiTreeLabel' }
    end

    local children = node.children or {}
    local p = item.prefix .. item.cont
    if #children == 1 then
      stack[#stack + 1] = { node = children[1], prefix = p, conn = '', cont = '' }
    else
      for i = #children, 1, -1 do
        local last = i == #children
        stack[#stack + 1] = {
          node = children[i],
          prefix = p,
          conn = last and '└─ ' or '├─ ',
          cont = last and '   ' or '│  ',
        }
      end
    end
  end
  if #lines == HEADER_LINES then
    lines[#lines + 1] = '(empty session)'
  end
  return lines, nodes, hls
end

--- The tree node on line `lnum` of a tree buffer.
function M.node_at(buf, lnum)
  local b = M.buffers[buf]
  return b and b.nodes[lnum] or nil
end

--- The line of the entry `id` in a tree buffer.
function M.line_of(buf, id)
  local b = M.buffers[buf]
  if not b then
    return nil
  end
  for lnum, node in pairs(b.nodes) do
    if node.id == id then
      return lnum
    end
  end
end

local function leaf_line(buf)
  local b = M.buffers[buf]
  for lnum, node in pairs(b and b.nodes or {}) do
    if node.isLeaf then
      return lnum
    end
  end
end

local function paint(buf, result, keep_cursor)
  local win = ui.buf_win(buf)
  local width = win and vim.api.nvim_win_get_width(win) or vim.o.columns
  local lines, nodes, hls = M.render(result, width)
  local b = M.buffers[buf]
  b.nodes, b.result, b.session = nodes, result, result.session
  local cursor = win and keep_cursor and vim.api.nvim_win_get_cursor(win) or nil
  ui.set_lines(buf, lines)
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for _, h in ipairs(hls) do
    local row, s, e, group = h[1], h[2], h[3], h[4]
    local len = #(lines[row + 1] or '')
    if s <= len then
      pcall(vim.api.nvim_buf_set_extmark, buf, ns, row, s, {
        end_col = (e < 0 or e > len) and len or e,
        hl_group = group,
      })
    end
  end
  if win then
    local target = cursor and math.min(cursor[1], #lines) or leaf_line(buf) or (HEADER_LINES + 1)
    pcall(vim.api.nvim_win_set_cursor, win, { target, 0 })
  end
end

--- Arguments of pi.tree: the flat form, always. The nested form nests two levels per
--- entry, and Neovim's JSON decoder stops at 1000 levels (a linear session of some 500
--- entries); the flat form has no depth and is nested here.
local function tree_args(session)
  return { session = session, flat = true }
end

--- Turns a flat pi.tree answer (nodes in depth-first order, each with its parentId) into
--- the nested form render() draws: children keep the server's order.
function M.nest(result)
  if type(result) ~= 'table' or result.roots or type(result.nodes) ~= 'table' then
    return result
  end
  local by_id, roots = {}, {}
  for _, n in ipairs(result.nodes) do
    n.children = {}
    by_id[n.id] = n
  end
  for _, n in ipairs(result.nodes) do
    local parent = n.parentId and by_id[n.parentId]
    if parent then
      parent.children[#parent.children + 1] = n
    else
      roots[#roots + 1] = n
    end
  end
  result.roots, result.nodes = roots, nil
  return result
end

--- Asks for the tree of `session` (nil: the current one) and calls `on_tree` with it
--- nested; a failure is reported and passed to `cb`.
local function request_tree(client, session, cb, on_tree)
  local c = require('pi_lsp.client')
  c.exec(client, 'pi.tree', tree_args(session), function(err, result)
    result = M.nest(result)
    if err or type(result) ~= 'table' then
      ui.notify('tree: ' .. c.format_error(err or 'no result'), vim.log.levels.ERROR)
      if cb then
        cb(err or 'no result')
      end
      return
    end
    on_tree(result)
  end)
end

local function fetch(client, buf, keep_cursor, cb)
  local b = M.buffers[buf]
  request_tree(client, b and b.session or nil, cb, function(result)
    if vim.api.nvim_buf_is_valid(buf) then
      paint(buf, result, keep_cursor)
    end
    if cb then
      cb(nil, result)
    end
  end)
end

--- Re-reads the tree shown in `buf`.
function M.refresh(buf, cb)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  local b = M.buffers[buf]
  local client = ui.client_of(b)
  if not client then
    return
  end
  fetch(client, buf, true, cb)
end

--- The choices of <CR> in the tree (and :PiNavigate {id}).
M.NAVIGATE_CHOICES = { 'No summary', 'Summarize', 'Summarize with custom instructions', 'Summarize and edit…' }

--- Asks how to navigate to `id`; `cb({summarize, instructions?, edit?})`.
local function navigate_choice(id, cb)
  local choices = M.NAVIGATE_CHOICES
  vim.ui.select(choices, { prompt = ('Navigate to %s:'):format(id), kind = 'pi_lsp.navigate' }, function(_, idx)
    if not idx then
      return
    end
    if idx == 3 then
      vim.ui.input({ prompt = 'Summary instructions: ' }, function(text)
        if text == nil then
          return
        end
        cb({ summarize = true, instructions = text ~= '' and text or nil })
      end)
    elseif idx == 4 then
      cb({ summarize = true, edit = true })
    else
      cb({ summarize = idx == 2 })
    end
  end)
end
M.navigate_choice = navigate_choice

--- The tree actions act on the node under the cursor: fn(node, b) with the
--- tree buffer's state, nothing on a line without a node.
local function with_node_at_cursor(buf, fn)
  local node = M.node_at(buf, vim.api.nvim_win_get_cursor(0)[1])
  if node then
    fn(node, M.buffers[buf])
  end
end

--- A command callback that redraws the tree once the write succeeded.
local function refresh_on_success(buf)
  return function(err)
    if not err and vim.api.nvim_buf_is_valid(buf) then
      M.refresh(buf)
    end
  end
end

local function navigate_at_cursor(buf)
  with_node_at_cursor(buf, function(node, b)
    navigate_choice(node.id, function(choice)
      if choice.edit then
        require('pi_lsp.edit').preview_branch({ targetId = node.id, session = b.session, instructions = choice.instructions },
          function(err, ebuf)
            -- The floating tree would cover the summary buffer.
            if not err and ebuf then
              for _, w in ipairs(vim.api.nvim_list_wins()) do
                if vim.api.nvim_win_is_valid(w) and vim.api.nvim_win_get_buf(w) == buf
                  and vim.api.nvim_win_get_config(w).relative ~= '' then
                  pcall(vim.api.nvim_win_close, w, true)
                end
              end
            end
          end, b.client_id)
        return
      end
      local args = vim.tbl_extend('force', { targetId = node.id, session = b.session }, choice)
      require('pi_lsp.commands').navigate(args, refresh_on_success(buf), b.client_id)
    end)
  end)
end

local function pin_at_cursor(buf)
  with_node_at_cursor(buf, function(node, b)
    require('pi_lsp.commands').pin({ entryId = node.id, pinned = node.pinned ~= true, session = b.session },
      refresh_on_success(buf), b.client_id)
  end)
end

local function label_at_cursor(buf)
  with_node_at_cursor(buf, function(node, b)
    vim.ui.input({ prompt = ('Label for %s (empty clears): '):format(node.id), default = node.label or '' }, function(text)
      if text == nil then
        return
      end
      require('pi_lsp.commands').label({ entryId = node.id, label = text, session = b.session },
        refresh_on_success(buf), b.client_id)
    end)
  end)
end

--- Whether a context edit may name the node: the server says so (Pi's rule, decided
--- there for every editor).
function M.editable(node)
  return type(node) == 'table' and node.editable == true
end

--- x / e / u in the tree: hide, replace or restore the message under the cursor.
local function edit_at_cursor(action)
  return function(buf)
    with_node_at_cursor(buf, function(node, b)
      require('pi_lsp.commands').edit_context_interactive(node.id, action,
        { session = b.session, client_id = b.client_id, preview = node.preview }, refresh_on_success(buf))
    end)
  end
end
M.edit_at_cursor = edit_at_cursor

--- R, S, F, C in the tree: rewind the files to the entry, summarize up to it, summarize
--- from it, condense a range (the first C marks its start, the second condenses).
local function rewind_key(fn, args_of)
  return function(buf)
    with_node_at_cursor(buf, function(node, b)
      require('pi_lsp.rewind')[fn](args_of(node, b), refresh_on_success(buf), b.client_id)
    end)
  end
end

local function entry_args(node, b)
  return { entryId = node.id, session = b.session }
end

local rewind_at_cursor = rewind_key('rewind', entry_args)
local summarize_up_to_cursor = rewind_key('summarize_up_to', entry_args)
local summarize_from_cursor = rewind_key('summarize_from', function(node, b)
  return { parentId = node.parentId, session = b.session }
end)

local function condense_at_cursor(buf)
  with_node_at_cursor(buf, function(node, b)
    if not b.condense_from then
      b.condense_from = node.id
      ui.notify(('condense from %s: press C on the last message of the range'):format(node.id))
      return
    end
    local from = b.condense_from
    b.condense_from = nil
    require('pi_lsp.rewind').condense({ fromId = from, toId = node.id, session = b.session }, refresh_on_success(buf), b.client_id)
  end)
end

local function context_by_size(buf)
  require('pi_lsp.context_size').open(M.buffers[buf] and M.buffers[buf].session)
end

local function refresh(buf)
  M.refresh(buf)
end

--- Opens (or refreshes) the tree of the current session.
---@param client vim.lsp.Client
---@param opts? {layout?: string, session?: string}
---@param cb? fun(err?: any, buf?: integer)
function M.open(client, opts, cb)
  opts = opts or {}
  request_tree(client, opts.session, cb, function(result)
    local topts = require('pi_lsp.config').options.tree
    local session = result.session and vim.fn.fnamemodify(result.session, ':t:r') or 'session'
    local buf = ui.scratch(BUF_NAME, {}, {
      layout = opts.layout or topts.layout,
      width = topts.width,
      height = topts.height,
      border = topts.border,
      title = 'Pi tree: ' .. session,
      filetype = 'pi_lsp_tree',
    })
    if ui.track(M.buffers, buf, { client_id = client.id, nodes = {}, result = result, session = result.session }) then
      ui.keymaps(buf, {
        { '<CR>', navigate_at_cursor, 'Pi: navigate to this entry' },
        { 'l', label_at_cursor, 'Pi: label this entry' },
        { 'P', pin_at_cursor, 'Pi: pin or unpin this entry' },
        { 'x', edit_at_cursor('omit'), 'Pi: hide this message from the context' },
        { 'e', edit_at_cursor('replace'), 'Pi: replace this message in the context' },
        { 'u', edit_at_cursor('restore'), 'Pi: restore this message to the context' },
        { 's', context_by_size, 'Pi: the context by size' },
        { 'R', rewind_at_cursor, 'Pi: rewind the files to this entry' },
        { 'S', summarize_up_to_cursor, 'Pi: summarize up to here (keep from this entry)' },
        { 'F', summarize_from_cursor, 'Pi: summarize from here (back to the parent, with a branch summary)' },
        { 'C', condense_at_cursor, 'Pi: condense a range (first C: its start, second C: its end)' },
        { 'r', refresh, 'Pi: refresh the tree' },
      })
    end
    local win = ui.buf_win(buf)
    if win then
      vim.wo[win].cursorline = true
    end
    paint(buf, result, false)
    if cb then
      cb(nil, buf)
    end
  end)
end

--- Refreshes open trees of a client when the server reports a new leaf.
function M.on_session_changed(client_id, params)
  ui.refresh_on_session_change(M.buffers, client_id, params, refresh)
end

return M
