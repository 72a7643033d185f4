-- Driven by tests/test_lsp_neovim.py: Neovim 0.11 as the client of `advisor lsp`, set up as the
-- README says (vim.lsp.config + vim.lsp.enable). Opens a file, waits for diagnostics, applies
-- the GPU201 quick fix and waits for the re-check. Writes what it saw as JSON; any Lua error
-- exits non-zero.
local python, file, out = arg[1], arg[2], arg[3]
local result = {}

vim.cmd('filetype on')
vim.lsp.config('advisor', {
  cmd = { python, '-m', 'advisor', 'lsp' },
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml', '.git' },
})
vim.lsp.enable('advisor')
vim.cmd.edit(vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()

local function codes()
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(found, d.code)
  end
  table.sort(found)
  return found
end

local function has(code)
  return vim.tbl_contains(codes(), code)
end

assert(vim.wait(20000, function() return has('GPU201') end, 20), 'no diagnostics within 20 s')
local client = vim.lsp.get_clients({ bufnr = buf, name = 'advisor' })[1]
result.encoding = client.offset_encoding
result.before = codes()
local target
for _, d in ipairs(vim.diagnostic.get(buf)) do
  if d.code == 'GPU101' then result.gpu101_col = d.col end
  if d.code == 'GPU201' then target = d end
end

local lsp_diag = target.user_data.lsp
local response = client:request_sync('textDocument/codeAction', {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  range = lsp_diag.range,
  context = { diagnostics = { lsp_diag }, only = { 'quickfix' } },
}, 10000, buf)
assert(response and response.result, 'no code actions: ' .. vim.inspect(response))
result.titles = {}
local applied = false
for _, action in ipairs(response.result) do
  table.insert(result.titles, action.title)
  if not applied and action.title:find('pin_memory', 1, true) then
    vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
    applied = true
  end
end
assert(applied, 'no pin_memory quick fix')
result.line = vim.api.nvim_buf_get_lines(buf, 5, 6, false)[1]
assert(vim.wait(20000, function() return not has('GPU201') and has('GPU101') end, 20), 'no re-check after the fix')
result.after = codes()

vim.fn.writefile({ vim.json.encode(result) }, out)
client:stop()
vim.cmd('qa!')
