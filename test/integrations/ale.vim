" Headless Vim + ALE run for vim-ale.sh: loads ALE and the shipped editor setup
" (integrations/editors/vim/torchtidy.vim) unchanged, lints the file given on the command
" line, waits for ALE to finish, and writes the location list to $ALE_OUT as
" "lnum:col:type:text" lines.
set nocompatible
let &packpath = '/usr/share/vim/vimfiles,' . &packpath
packadd! ale
filetype plugin on
syntax off
execute 'source ' . fnameescape($TORCHTIDY_SRC . '/integrations/editors/vim/torchtidy.vim')

let g:ale_lint_on_enter = 0
" ALE otherwise fills the list from a timer after the job ends, which the wait loop below
" could miss.
let g:ale_set_lists_synchronously = 1

function! s:LintAndDump() abort
  ALELint
  " ALE runs the linter as a job; sleeping lets Vim run the job's callbacks.
  let l:waited = 0
  while ale#engine#IsCheckingBuffer(bufnr('')) && l:waited < 1200
    sleep 100m
    let l:waited += 1
  endwhile
  let l:lines = map(getloclist(0), {_, e -> e.lnum . ':' . e.col . ':' . e.type . ':' . e.text})
  if l:waited >= 1200
    call add(l:lines, 'TIMEOUT: ALE still linting after 120 s')
  endif
  call writefile(l:lines, $ALE_OUT)
endfunction

autocmd VimEnter * call s:LintAndDump() | qall!
