# The judge's runtime for R (installed as /opt/passk/R/judge.R): the entry point of the judge's process,
# `Rscript judge.R` in the judge's directory. It holds none of the model's code.
#
# It runs the tests (main.R: the prompt's code before the function to complete, a stub for that function, the
# problem's tests, which end with `test_humaneval()`) one top-level expression at a time in the global
# environment, as Rscript would, and reports PASS on descriptor 3 once every expression ran without an error.
# quit() and q() in the tests end the tests, not the process (status 0: they passed). A stub's call sends the
# arguments to the candidate's process (descriptor 4) and returns the value it answers (descriptor 5), rebuilt
# from data. How a call ends the tests instead (report.py): the candidate's process ended or closed its channel
# (ENDED), the function raised (RAISED <class>: <message>, which the tests cannot catch), it returned a value the
# wire cannot carry (ERROR), or it sent anything but one well-formed answer (BROKEN). Data the candidate wrote
# unasked is looked for before each call, before PASS (there it is BROKEN), and as failing tests end (FLAG
# out_of_turn).
#
# A failed test is reported as one process reports it: R's error line on stderr ("Error in test_humaneval() :
# ... is not TRUE" for a failed stopifnot), with exit status 1; PID 1 classifies it with the language's stderr
# patterns.

local({
  wire <- new.env(parent = baseenv())
  sys.source("/opt/passk/R/wire.R", envir = wire)
  REPORT <- 3L
  CALLS <- 4L
  REPLIES <- 5L
  # How long the ending judge waits for the candidate's process to end once its calls are closed (milliseconds).
  SURPLUS_WAIT_MS <- 100
  stop_now <- function(status) base::quit(save = "no", status = status, runLast = FALSE)

  report <- wire$open_fd(REPORT, "wb")
  calls <- wire$open_fd(CALLS, "wb")
  replies <- wire$open_fd(REPLIES, "rb")
  # A second, non-blocking, look at the replies: data the candidate wrote unasked.
  unasked_replies <- wire$open_fd(REPLIES, "rb", blocking = FALSE)
  # The calls' own descriptor closes here, so that closing the connection ends the candidate's input.
  wire$close_fd(CALLS)
  calls_open <- TRUE

  unasked <- function(wait_ms = 0) wire$peek(unasked_replies, wait_ms) == "data"

  # Unasked data, looked for as failing tests end: the calls are closed, so an honest server returns and its
  # process ends (end of input on the replies); whatever arrives before that, or within SURPLUS_WAIT_MS, is
  # unasked.
  surplus <- function() {
    if (calls_open) {
      close(calls)
      calls_open <<- FALSE
    }
    unasked(SURPLUS_WAIT_MS)
  }

  write_report <- function(text) {
    tryCatch({
      writeBin(charToRaw(enc2utf8(text)), report)
      flush(report)
    }, error = function(problem) NULL)
  }

  # End the tests with `record` as the report (its last line is the outcome: report.py).
  finish <- function(record) {
    flush(stdout())
    write_report(paste0(if (surplus()) "FLAG out_of_turn\n" else "", record))
    stop_now(1)
  }

  answer <- function(name, reply) {
    outcome <- tryCatch({
      r <- wire$reader(reply)
      kind <- wire$letter(r)
      if (kind == "E") {
        raised <- paste0(wire$text_of(wire$read_bytes(r)), ": ", wire$text_of(wire$read_bytes(r)))
        wire$finish(r)
        list(raised = raised)
      } else if (kind == "U") {
        unsendable <- wire$text_of(wire$read_bytes(r))
        wire$finish(r)
        wire$unsendable(unsendable)
      } else if (kind == "R") {
        value <- wire$decode_value(r, 0)
        wire$finish(r)
        list(value = value)
      } else {
        wire$malformed("not an answer")
      }
    }, passk_unsendable = function(problem) {
      finish(paste0("ERROR ", name, "() returned a value of type ", conditionMessage(problem),
                    ", which passk cannot compare"))
    }, passk_malformed = function(problem) {
      finish(paste0("BROKEN ", name, "(): ", conditionMessage(problem)))
    })
    if (!is.null(outcome$raised)) finish(paste0("RAISED ", outcome$raised))
    outcome$value
  }

  # The stubs' call: `name` with the arguments the tests passed (a named list; see arguments()).
  call_candidate <- function(name, args) {
    if (unasked()) finish(paste0("BROKEN ", name, "(): the program wrote on its channel before the call"))
    encoded <- tryCatch(wire$encode_value(args, 1), passk_unsendable = function(problem) {
      finish(paste0("ERROR the tests pass ", name, "() a value of type ", conditionMessage(problem),
                    ", which passk cannot send"))
    })
    message <- c(wire$TAG$C, wire$string(charToRaw(enc2utf8(name))), wire$u32(1), encoded)
    if (!wire$send(calls, message)) finish("ENDED")
    reply <- tryCatch(wire$receive(replies), passk_malformed = function(problem) {
      finish(paste0("BROKEN ", name, "(): ", conditionMessage(problem)))
    })
    if (is.null(reply)) finish("ENDED")
    answer(name, reply)
  }

  # The arguments a stub received, by the names of the formals they matched (those the tests left out are left
  # out: the candidate's own defaults apply), then those of `...` with their own names ("" where none).
  arguments <- function(frame, formals) {
    args <- list()
    for (formal in formals) {
      if (formal == "...") {
        dots <- eval(quote(list(...)), frame)
        dot_names <- names(dots)
        if (is.null(dot_names)) dot_names <- character(length(dots))
        for (i in seq_along(dots)) {
          args[length(args) + 1] <- list(dots[[i]])
          names(args)[length(args)] <- dot_names[i]
        }
      } else if (!eval(call("missing", as.name(formal)), frame)) {
        args[length(args) + 1] <- list(get(formal, envir = frame))
        names(args)[length(args)] <- formal
      }
    }
    if (is.null(names(args))) names(args) <- character(0)
    args
  }

  # After the tests ended: the only way to a pass. (Only what is there already: waiting for the candidate's
  # process to end would cost every pass its exit.)
  pass <- function() {
    if (unasked()) finish("BROKEN the program wrote on its channel after its last answer")
    flush(stdout())
    write_report("PASS")
    stop_now(0)
  }

  # The tests failed: `line` (the first fault) goes to stderr for PID 1's patterns.
  failed <- function(line) {
    flush(stdout())
    lines <- strsplit(line, "\n", fixed = TRUE)[[1]]
    cat(lines[seq_len(min(20, length(lines)))], sep = "\n", file = stderr())
    if (surplus()) write_report("FLAG out_of_turn\n")
    stop_now(1)
  }

  # An error as Rscript reports it at the top level.
  error_line <- function(problem) {
    text <- conditionMessage(problem)
    where <- conditionCall(problem)
    if (is.null(where)) return(paste0("Error: ", text))
    paste0("Error in ", paste(deparse(where, nlines = 1), collapse = ""), " : ", text)
  }

  # The tests' quit() ends the tests, not the process.
  quit_tests <- function(save = "default", status = 0, runLast = TRUE) {
    stop(structure(class = c("passk_quit", "condition"), list(message = "quit", call = NULL, status = status)))
  }

  assign("PasskJudge", list(call = call_candidate, arguments = arguments), envir = globalenv())
  assign("quit", quit_tests, envir = globalenv())
  assign("q", quit_tests, envir = globalenv())

  expressions <- tryCatch(parse("main.R", keep.source = FALSE), error = function(problem) {
    failed(paste0("Error: ", conditionMessage(problem)))
  })
  for (expression in expressions) {
    ended <- tryCatch({
      eval(expression, globalenv())
      NULL
    }, passk_quit = function(quitting) quitting, error = function(problem) problem)
    if (inherits(ended, "passk_quit")) {
      if (identical(as.integer(ended$status), 0L)) pass()
      failed(paste0("passk: the tests quit with status ", ended$status))
    }
    if (!is.null(ended)) failed(error_line(ended))
  }
  pass()
}, envir = new.env(parent = baseenv()))
