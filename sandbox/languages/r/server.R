# passk's server in the candidate's process (installed as /opt/passk/R/server.R, read by Rscript as the user
# profile, R_PROFILE_USER, before the model's code, so what it relies on is taken before anything can replace
# it). The candidate's program is the original program's text up to the tests (the prompt and the model's
# completion, which closes the function itself), followed by one statement that passk adds:
#
#     PasskServer$serve("name", name)
#
# so the function is served exactly where the tests would have started in one process, after every top-level
# expression of the model's code. The server reads calls on descriptor 3, calls the function with the arguments
# rebuilt from data (one named list: do.call), and answers on descriptor 4: the value it returned ('R'), what it
# raised ('E' <class> <message>), or 'U' <class> for a value the wire cannot carry. When the judge closes its end,
# serve returns and the program runs on to its end.
#
# Running out of memory, which R reports as an error, ends this process as the one process's report would end it
# ("Error: cannot allocate vector of size ..."); quit() in the function quits.
#
# The server is the candidate's own: the model's code may change anything in this process, and so anything the
# server sends. The judge trusts none of it (judge.R, values.py).

local({
  wire <- new.env(parent = baseenv())
  sys.source("/opt/passk/R/wire.R", envir = wire)
  CALLS <- 3L
  REPLIES <- 4L
  MEMORY <- "cannot allocate|memory exhausted|vector memory limit"
  serving <- FALSE
  calls <- NULL
  replies <- NULL

  stop_now <- function(status) base::quit(save = "no", status = status, runLast = FALSE)

  answer <- function(fn, args) {
    outcome <- tryCatch(list(value = do.call(fn, args)), error = function(problem) problem)
    if (!inherits(outcome, "error")) {
      return(tryCatch(c(wire$TAG$R, wire$encode_value(outcome$value, 0)), passk_unsendable = function(problem) {
        c(wire$TAG$U, wire$string(charToRaw(enc2utf8(conditionMessage(problem)))))
      }))
    }
    message <- tryCatch(as.character(conditionMessage(outcome))[1], error = function(e) "")
    if (is.na(message)) message <- ""
    if (grepl(MEMORY, message)) {
      cat("Error: ", message, "\n", sep = "", file = stderr())
      stop_now(1)
    }
    kind <- tryCatch(as.character(class(outcome))[1], error = function(e) "error")
    c(wire$TAG$E, wire$string(charToRaw(enc2utf8(kind))), wire$string(charToRaw(enc2utf8(message))))
  }

  # The call a message holds: its function's name and its arguments (a named list).
  call_of <- function(message) {
    r <- wire$reader(message)
    if (wire$letter(r) != "C") wire$malformed("not a call")
    called <- wire$text_of(wire$read_bytes(r))
    if (wire$read_u32(r) != 1) wire$malformed("not one list of arguments")
    args <- wire$decode_value(r, 1)
    wire$finish(r)
    if (!is.list(args)) wire$malformed("not a list of arguments")
    list(name = called, args = args)
  }

  # Serve the function `fn` (the program's `name`) until the judge closes its end.
  serve <- function(name, fn) {
    if (serving) return(invisible(NULL))
    serving <<- TRUE
    repeat {
      message <- tryCatch(wire$receive(calls), error = function(problem) stop_now(70))
      if (is.null(message)) return(invisible(NULL))
      # Only the judge writes calls: a call it did not mean is passk's own failure.
      call <- tryCatch(call_of(message), error = function(problem) stop_now(70))
      if (!identical(call$name, name) || !is.function(fn)) stop_now(70)
      if (!wire$send(replies, answer(fn, call$args))) return(invisible(NULL))
    }
  }

  calls <- wire$open_fd(CALLS, "rb")
  replies <- wire$open_fd(REPLIES, "wb")
  wire$close_fd(c(CALLS, REPLIES))
  assign("PasskServer", list(serve = serve), envir = globalenv())
}, envir = new.env(parent = baseenv()))
