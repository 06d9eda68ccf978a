-- Headless Neovim for neovim.test: the shipped setup (integrations/editors/lsp/neovim.lua)
-- starts `torchtidy lsp` for the C++ buffer given on the command line; this waits for its
-- diagnostics, writes them to $NVIM_OUT, then fixes the line, saves, and writes what the
-- server published after the save.
vim.cmd('filetype on')
dofile(os.getenv('TORCHTIDY_SRC') .. '/integrations/editors/lsp/neovim.lua')

local out = {}
local function dump(label)
  for _, d in ipairs(vim.diagnostic.get(0)) do
    local lsp = (d.user_data or {}).lsp or {}
    table.insert(out, string.format('%s: %d:%d %s %s %s', label, d.lnum + 1, d.col + 1,
      d.source or '?', lsp.code or d.code or '?', d.message))
  end
  table.insert(out, string.format('%s: %d diagnostic(s)', label, #vim.diagnostic.get(0)))
end

vim.api.nvim_create_autocmd('VimEnter', {
  callback = function()
    local seen = vim.wait(300000, function() return #vim.diagnostic.get(0) > 0 end, 100)
    if not seen then table.insert(out, 'TIMEOUT: no diagnostics after 300 s') end
    dump('opened')
    local row = vim.fn.search('push_back(loss)')
    local line = vim.api.nvim_buf_get_lines(0, row - 1, row, true)[1]
    vim.api.nvim_buf_set_lines(0, row - 1, row, true,
      { (line:gsub('push_back%(loss%)', 'push_back(loss.detach())')) })
    vim.cmd('write')
    local cleared = vim.wait(300000, function() return #vim.diagnostic.get(0) == 0 end, 100)
    if not cleared then table.insert(out, 'TIMEOUT: diagnostics still there 300 s after the save') end
    dump('saved')
    vim.fn.writefile(out, os.getenv('NVIM_OUT'))
    vim.cmd('qall!')
  end,
})
