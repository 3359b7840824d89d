#lang racket/base
;; passk's server in the candidate's process (installed and compiled as /opt/passk/racket/server.rkt). The
;; candidate's program is the original program's text up to the tests (the prompt and the model's completion, which
;; closes the function), followed by the forms passk adds:
;;
;;     (require (only-in (file "/opt/passk/racket/server.rkt") passk-serve))
;;     (passk-serve name "name")
;;
;; so the function is served exactly where the tests would have started in one module, after every top-level form of
;; the model's code. The server reads calls on descriptor 3, applies the function to the arguments rebuilt from data,
;; and answers on descriptor 4: the value it returned ('R'), or what it raised ('E' <kind> <message>). When the
;; judge closes its end, passk-serve returns and the module runs on to its end. `(exit 0)` in the function exits
;; the process, as it would end the one process of the original program.
;;
;; The server is the candidate's own: the model's code may shadow anything here, and so anything it sends. The judge
;; trusts none of it (call.rkt, values.py).

(require ffi/unsafe/port "wire.rkt")
(provide passk-serve)

(define (kind-of raised)
  (if (exn? raised)
      (regexp-replace #rx"^struct:" (symbol->string (vector-ref (struct->vector raised) 0)) "")
      "raise"))

(define (message-of raised)
  (if (exn? raised) (exn-message raised) (format "~e" raised)))

(define (answer function args)
  (with-handlers ([exn:break? raise]
                  [(lambda (raised) #t)
                   (lambda (raised)
                     (bytes-append #"E" (string-bytes (string->bytes/utf-8 (kind-of raised)))
                                   (string-bytes (string->bytes/utf-8 (message-of raised)))))])
    (bytes-append #"R" (encode (apply function args)))))

(define (call message)
  (define in (open-input-bytes message))
  (unless (eqv? (read-byte in) (char->integer #\C)) (malformed "not a call"))
  (define name (read-string-bytes in))
  (define args (for/list ([_ (in-range (read-u32 in))]) (decode-value in 1)))
  (unless (eof-object? (peek-byte in)) (malformed "trailing bytes"))
  (values name args))

;; Serve `function` (named `name`) until the judge closes its end.
(define (passk-serve function name)
  (define calls (unsafe-file-descriptor->port 3 'calls '(read)))
  (define replies (unsafe-file-descriptor->port 4 'replies '(write)))
  ;; Only the judge writes calls: a call it did not mean is passk's own failure.
  (with-handlers ([(lambda (e) (or (exn:fail:passk-malformed? e) (exn:fail:passk-unsendable? e)))
                   (lambda (e) (exit 70))])
    (let loop ()
      (define message (receive calls))
      (when message
        (define-values (called args) (call message))
        (unless (equal? called (string->bytes/utf-8 name)) (malformed "a call of a function not served"))
        (when (send-message replies (answer function args))
          (loop))))))
