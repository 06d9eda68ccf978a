;;; torchtidy-lsp.el --- torchtidy's language server in Emacs  -*- lexical-binding: t -*-

;; `torchtidy' must be in `exec-path' (cmake --install).

;; eglot (built into Emacs 29) runs one server per buffer: this makes torchtidy the C/C++
;; server. To keep clangd for completion and navigation, use lsp-mode below, which runs
;; torchtidy as an add-on server beside it.
(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               '((c++-mode c-mode c++-ts-mode c-ts-mode) . ("torchtidy" "lsp"))))

(with-eval-after-load 'lsp-mode
  (lsp-register-client
   (make-lsp-client :new-connection (lsp-stdio-connection '("torchtidy" "lsp"))
                    :activation-fn (lsp-activate-on "c" "cpp")
                    :add-on? t
                    :server-id 'torchtidy)))

(provide 'torchtidy-lsp)
;;; torchtidy-lsp.el ends here
