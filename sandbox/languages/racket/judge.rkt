#lang racket/base
;; The judge's runtime for Racket (installed and compiled as /opt/passk/racket/judge.rkt): the entry point of the
;; judge's process, `racket /opt/passk/racket/judge.rkt` in the judge's directory. It holds none of the model's code.
;;
;; It runs the tests' module (main.rkt: the prompt's code before the function to complete, a stub for that function
;; calling passk-call, the problem's tests) and reports PASS (call.rkt) once it ran to its end with no failed check.
;; rackunit reports a failed check outside a test case on stderr and goes on, as in one process; the judge notes it
;; too, and any failed or raising check, or an uncaught error of the tests' own code, fails the tests (exit status 1;
;; PID 1 classifies it with the language's stderr patterns).

(require racket/string rackunit "call.rkt")

(define failed? #f)
(define report-check (current-check-handler))

;; A check's value as rackunit shows it (it wraps actual and expected in a transparent `pretty-info`).
(define (shown value)
  (define fields (and (struct? value) (struct->vector value)))
  (if (and fields (eq? (vector-ref fields 0) 'struct:pretty-info)) (vector-ref fields 1) value))

;; The first failed check's line, first on stderr (PID 1 takes its detail from it): `FAILURE name: ..., actual: ...,
;; expected: ...` for a check that failed, `ERROR <message>` for one that raised; rackunit's own report follows.
(define (note-check e)
  (unless failed?
    (set! failed? #t)
    (eprintf "~a\n"
             (if (exn:test:check? e)
                 (string-append "FAILURE "
                                (string-join (for/list ([info (in-list (exn:test:check-stack e))]
                                                        #:when (memq (check-info-name info) '(name actual expected)))
                                               (format "~a: ~e" (check-info-name info) (shown (check-info-value info))))
                                             ", "))
                 (format "ERROR ~a" (if (exn? e) (exn-message e) (format "~e" e))))))
  (report-check e))

(with-handlers ([(lambda (e) (not (exn:break? e)))
                 (lambda (e)
                   (eprintf "uncaught ~a\n" (if (exn? e) (exn-message e) (format "~e" e)))
                   ((error-display-handler) (if (exn? e) (exn-message e) (format "uncaught exception: ~e" e)) e)
                   (passk-failed))])
  (parameterize ([current-check-handler note-check])
    (dynamic-require (build-path (current-directory) "main.rkt") #f)))
(if failed? (passk-failed) (passk-pass))
