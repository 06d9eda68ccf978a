;;; torchtidy.el --- flycheck checker running torchtidy through clang-tidy-torch  -*- lexical-binding: t; -*-

;; Load after flycheck:  (load "/path/to/torchtidy/integrations/editors/emacs/torchtidy.el")
;; clang-tidy reads the file on disk, so the checker runs on saved buffers only.

(require 'flycheck)

(flycheck-def-option-var torchtidy-build-dir nil torchtidy
  "Directory holding compile_commands.json, passed as -p.
When nil, clang-tidy looks for compile_commands.json in the file's
directory and its parents."
  :type '(choice (const :tag "Search upwards" nil) (directory :tag "Build directory"))
  :safe #'stringp)

(flycheck-def-option-var torchtidy-checks "-*,torch-*" torchtidy
  "Checks glob passed as --checks; nil to use the project's .clang-tidy."
  :type '(choice (const :tag "From .clang-tidy" nil) (string :tag "Checks"))
  :safe #'stringp)

(flycheck-define-checker torchtidy
  "LibTorch training-code checks: stock clang-tidy-16 with the torchtidy plugin."
  :command ("clang-tidy-torch"
            (option "--checks=" torchtidy-checks concat)
            (option "-p" torchtidy-build-dir)
            source-original)
  :predicate flycheck-buffer-saved-p
  :error-patterns
  ((error line-start (file-name) ":" line ":" column ": error: "
          (message) " [" (id (one-or-more (not (any "]")))) "]" line-end)
   (warning line-start (file-name) ":" line ":" column ": warning: "
            (message) " [" (id (one-or-more (not (any "]")))) "]" line-end)
   (info line-start (file-name) ":" line ":" column ": note: " (message) line-end))
  :modes (c-mode c++-mode c-ts-mode c++-ts-mode))

(add-to-list 'flycheck-checkers 'torchtidy)

(provide 'torchtidy)
;;; torchtidy.el ends here
