# The value wire (sandbox/runtime/values.py has the rule) in R: framing on descriptors and the codec.
# Installed in the R image as /opt/passk/R/wire.R; sourced (sys.source, into an environment whose parent is the
# base environment, so nothing defined in the global environment changes what it calls) by the judge (judge.R)
# and by passk's server in the candidate's process (server.R).
#
# Descriptors. R has no call that reads or writes a descriptor by number, so each one is opened anew by its path,
# /dev/fd/N, as a fifo() connection: on Linux that opens the same pipe (an anonymous pipe's open never waits for
# the other side), and a fifo() connection is unbuffered read(2) and write(2), so no byte of a later message is
# ever read ahead into a buffer. A descriptor that must be closed for the other side to see the end (the judge's
# calls) is closed by number with the parallel package's closeFD, once its connection is open.
#
# R's values and how each crosses, one canonical form each (equal values, equal bytes):
#   NULL                               n
#   an atomic vector or a list         a <string typeof> then its elements: A <u32 n> <elements> without a names
#                                      attribute, M <u32 n> <n pairs: name, element> with one (a name is s, or n
#                                      for NA); typeof is logical, integer, double, character or list
#   an element of a logical vector     T, F, or n for NA
#   an element of an integer vector    i (NA is R's own NA_integer_, -2^31)
#   an element of a double vector      d, its 8 bytes (NA_real_ and NaN keep their payloads, -0 keeps its sign)
#   an element of a character vector   s (its bytes, UTF-8 in passk's C.UTF-8 locale), or n for NA
#   an element of a list               any value above
# A scalar is a vector of length one, as in R: c(1, 2) is a "double" A of two d, 1L an "integer" A of one i,
# list(a = 1) a "list" M. So identical() and all.equal() in the judge see what they would see in one process: the
# type, the length, the names, NA against NaN. Any other attribute (dim, class, levels: a matrix, a factor, a data
# frame), and any other type (a function, an environment, complex, raw) cannot be rebuilt faithfully: the whole
# value crosses as X with class(x)[1], and the judge fails the sample as an error. A vector's elements are two
# levels below it (its A or M between), and every node stays within MAX_DEPTH, as values.py reads them: lists nest
# 49 deep at most. A receiver refuses any other tag and any byte that is not exactly one well-formed value
# (Malformed): a NUL in a string, a count past the end, trailing bytes.
#
# Only data crosses: the receiver builds fresh vectors from bytes and never calls anything of the sender's.

MAX_DEPTH <- 100
MAX_MESSAGE <- 2^30
READ_CHUNK <- 1048576

condition <- function(class, message) {
  structure(class = c(class, "error", "condition"), list(message = message, call = NULL))
}

# Bytes that are not a well-formed value (or message).
malformed <- function(text) stop(condition("passk_malformed", text))

# A value the wire cannot carry; `kind` names it (values.py's X).
unsendable <- function(kind) stop(condition("passk_unsendable", kind))

TYPES <- c("logical", "integer", "double", "character", "list")
TAG <- lapply(c(n = "n", a = "a", A = "A", M = "M", s = "s", T = "T", F = "F", i = "i", d = "d", X = "X",
                C = "C", R = "R", E = "E", U = "U"), charToRaw)

# ------------------------------------------------------------------ bytes out

u32 <- function(n) {
  n <- as.double(n)
  as.raw(c(n %/% 16777216, (n %/% 65536) %% 256, (n %/% 256) %% 256, n %% 256))
}

string <- function(bytes) c(u32(length(bytes)), bytes)

# The bytes of one string element (NA: n).
string_element <- function(s) {
  if (is.na(s)) return(TAG$n)
  if (Encoding(s) == "latin1") s <- enc2utf8(s)
  c(TAG$s, string(charToRaw(s)))
}

# What an X names: the value's class as R reports it ("matrix", "factor", "data.frame", "function").
describe <- function(x) {
  kind <- class(x)
  if (length(kind) && is.character(kind) && !is.na(kind[1])) kind[1] else typeof(x)
}

# The elements of an atomic vector or list, one raw vector each (`whole`: one raw vector for them all).
elements <- function(x, depth, whole) {
  n <- length(x)
  fixed <- function(tag, size, what) {
    if (n == 0) return(if (whole) raw(0) else list())
    bytes <- matrix(writeBin(what, raw(), size = size, endian = "big"), nrow = size)
    cells <- rbind(matrix(tag, nrow = 1, ncol = n), bytes)
    if (whole) as.vector(cells) else lapply(seq_len(n), function(i) cells[, i])
  }
  items <- switch(typeof(x),
    logical = {
      tags <- lapply(x, function(b) if (is.na(b)) TAG$n else if (b) TAG$T else TAG$F)
      if (whole) return(unlist(tags, use.names = FALSE)) else return(tags)
    },
    integer = return(fixed(TAG$i, 4, as.vector(unclass(x)))),
    double = return(fixed(TAG$d, 8, as.vector(unclass(x)))),
    character = lapply(x, string_element),
    list = lapply(unclass(x), function(item) encode_value(item, depth + 2)))
  if (whole) unlist(items, use.names = FALSE) else items
}

encode_value <- function(x, depth) {
  if (depth > MAX_DEPTH) unsendable("deeply nested value")
  if (is.null(x)) return(TAG$n)
  # A vector's node, its A or M and its elements: every node within MAX_DEPTH, as values.py reads them.
  if (depth + 2 > MAX_DEPTH) unsendable("deeply nested value")
  type <- typeof(x)
  attrs <- names(attributes(x))
  if (!(type %in% TYPES) || (length(attrs) && !identical(attrs, "names"))) unsendable(describe(x))
  n <- length(x)
  if (n > 4294967295) unsendable("vector of 2^32 elements or more")
  head <- c(TAG$a, string(charToRaw(type)))
  if (is.null(names(x))) return(c(head, TAG$A, u32(n), elements(x, depth, whole = TRUE)))
  keys <- lapply(names(x), string_element)
  items <- elements(x, depth, whole = FALSE)
  c(head, TAG$M, u32(n), unlist(.mapply(c, list(keys, items), NULL), use.names = FALSE))
}

# The bytes of `x`: itself, or X with the class of what cannot cross (the whole value).
encode <- function(x, depth = 0) {
  tryCatch(encode_value(x, depth), passk_unsendable = function(problem) {
    c(TAG$X, string(charToRaw(enc2utf8(conditionMessage(problem)))))
  })
}

# ------------------------------------------------------------------ bytes in

# A message being read: its bytes and a position.
reader <- function(data) {
  r <- new.env(parent = emptyenv())
  r$data <- data
  r$at <- 1
  r
}

left <- function(r) length(r$data) - r$at + 1

take <- function(r, size) {
  if (size < 0 || size > left(r)) malformed("truncated")
  if (size == 0) return(raw(0))
  chunk <- r$data[r$at:(r$at + size - 1)]
  r$at <- r$at + size
  chunk
}

letter <- function(r) {
  b <- take(r, 1)
  if (b == as.raw(0) || b > as.raw(127)) malformed("an unknown tag")
  rawToChar(b)
}

read_u32 <- function(r) sum(as.double(as.integer(take(r, 4))) * c(16777216, 65536, 256, 1))

read_bytes <- function(r) take(r, read_u32(r))

# A count of items, each at least one byte: never more than the bytes left (a count alone allocates nothing).
read_count <- function(r) {
  count <- read_u32(r)
  if (count > left(r)) malformed("a count past the end")
  count
}

text_of <- function(bytes) {
  if (any(bytes == as.raw(0))) malformed("a NUL byte in a string (R strings cannot hold one)")
  text <- rawToChar(bytes)
  if (any(bytes > as.raw(127)) && validUTF8(text)) Encoding(text) <- "UTF-8"
  text
}

finish <- function(r) {
  if (left(r) != 0) malformed("trailing bytes")
}

# One element of a vector of type `type`.
decode_element <- function(r, type, depth) {
  if (type == "list") return(decode_value(r, depth))
  tag <- letter(r)
  switch(type,
    logical = switch(tag, T = TRUE, F = FALSE, n = NA, malformed(paste("a logical element tagged", tag))),
    integer = if (tag == "i") readBin(take(r, 4), "integer", size = 4, endian = "big")
              else malformed(paste("an integer element tagged", tag)),
    double = if (tag == "d") readBin(take(r, 8), "double", size = 8, endian = "big")
             else malformed(paste("a double element tagged", tag)),
    character = if (tag == "s") text_of(read_bytes(r)) else if (tag == "n") NA_character_
                else malformed(paste("a character element tagged", tag)))
}

# A value rebuilt from `r`: Unsendable for X (a value the sender could not carry), Malformed for anything that is
# not one well-formed value.
decode_value <- function(r, depth) {
  if (depth > MAX_DEPTH) malformed("nested too deeply")
  tag <- letter(r)
  if (tag == "n") return(NULL)
  if (tag == "X") unsendable(text_of(read_bytes(r)))
  if (tag != "a") malformed(paste("a tag R does not read:", tag))
  if (depth + 2 > MAX_DEPTH) malformed("nested too deeply")
  named <- read_bytes(r)
  if (length(named) > 16 || any(named == as.raw(0))) malformed("a type R does not rebuild")
  type <- rawToChar(named)
  if (!(type %in% TYPES)) malformed("a type R does not rebuild")
  shape <- letter(r)
  if (!(shape %in% c("A", "M"))) malformed(paste("a vector's elements tagged", shape))
  count <- read_count(r)
  value <- vector(type, count)
  keys <- if (shape == "M") character(count)
  for (i in seq_len(count)) {
    if (shape == "M") {
      key <- letter(r)
      keys[i] <- if (key == "s") text_of(read_bytes(r)) else if (key == "n") NA_character_
                 else malformed(paste("a name tagged", key))
    }
    item <- decode_element(r, type, depth + 2)
    if (type == "list") value[i] <- list(item) else value[i] <- item
  }
  if (shape == "M") names(value) <- keys
  value
}

# The one value `data` holds.
decode <- function(data) {
  r <- reader(data)
  value <- decode_value(r, 0)
  finish(r)
  value
}

# ------------------------------------------------------------------ framing

# A connection on descriptor `fd` (its own open file description of the same pipe).
open_fd <- function(fd, mode, blocking = TRUE) fifo(sprintf("/dev/fd/%d", fd), open = mode, blocking = blocking)

# Closes descriptor `fd` itself (the connections opened on it stay open).
close_fd <- function(fd) parallel:::closeFD(as.integer(fd))

# Exactly `size` bytes from `con`; NULL at a clean end of input before the first byte, Malformed if cut.
read_exactly <- function(con, size, clean_end) {
  parts <- list()
  got <- 0
  while (got < size) {
    chunk <- readBin(con, "raw", min(size - got, READ_CHUNK))
    if (length(chunk) == 0) {
      if (clean_end && got == 0) return(NULL)
      malformed("a message cut short")
    }
    parts[[length(parts) + 1]] <- chunk
    got <- got + length(chunk)
  }
  unlist(parts, use.names = FALSE)
}

# The next framed message on `con`, or NULL at a clean end of input before it.
receive <- function(con) {
  header <- read_exactly(con, 4, TRUE)
  if (is.null(header)) return(NULL)
  size <- sum(as.double(as.integer(header)) * c(16777216, 65536, 256, 1))
  if (size > MAX_MESSAGE) malformed("a message over 1 GiB")
  if (size == 0) return(raw(0))
  read_exactly(con, size, FALSE)
}

# Writes `message` framed on `con`; FALSE if the other side is gone (R turns SIGPIPE into an error).
send <- function(con, message) {
  tryCatch({
    writeBin(c(u32(length(message)), message), con)
    flush(con)
    TRUE
  }, error = function(problem) FALSE)
}

# Whether the non-blocking connection `con` has data (one byte of it is consumed) or an end of input, looking
# for `wait_ms` milliseconds: "data", "end" or "none".
peek <- function(con, wait_ms = 0) {
  deadline <- proc.time()[["elapsed"]] + wait_ms / 1000
  repeat {
    got <- tryCatch(readBin(con, "raw", 1), error = function(problem) NULL)
    if (length(got) == 1) return("data")
    if (!is.null(got)) return("end")
    if (proc.time()[["elapsed"]] >= deadline) return("none")
    Sys.sleep(0.002)
  }
}
