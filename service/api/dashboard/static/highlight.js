// A small Python syntax highlighter: one pass of sticky regexes, output built as DOM text nodes
// (never innerHTML), so program text cannot inject markup.

const KEYWORDS = new Set(("False None True and as assert async await break class continue def del elif else except " +
  "finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case").split(" "));
const BUILTINS = new Set(("abs all any ascii bin bool bytearray bytes callable chr classmethod compile complex dict dir " +
  "divmod enumerate eval exec filter float format frozenset getattr globals hasattr hash hex id input int isinstance " +
  "issubclass iter len list locals map max min next object oct open ord pow print property range repr reversed round " +
  "set setattr slice sorted staticmethod str sum super tuple type vars zip self cls Exception ValueError TypeError " +
  "KeyError IndexError RuntimeError AssertionError StopIteration NotImplementedError ZeroDivisionError").split(" "));

const RULES = [
  ["com", /#[^\n]*/y],
  // Triple-quoted strings first (may span lines), then single-line ones; optional prefixes.
  ["str", /(?:[rRbBuUfF]{1,2})?(?:"""[\s\S]*?(?:"""|$(?![\s\S]))|'''[\s\S]*?(?:'''|$(?![\s\S])))/y],
  ["str", /(?:[rRbBuUfF]{1,2})?(?:"(?:[^"\\\n]|\\[\s\S])*"?|'(?:[^'\\\n]|\\[\s\S])*'?)/y],
  ["num", /(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJ]?)/y],
  ["dec", /@[A-Za-z_][\w.]*/y],
  ["name", /[A-Za-z_][A-Za-z_0-9]*/y],
  ["op", /[-+*/%=<>!&|^~:]+|[()[\]{},.;]/y],
  ["ws", /\s+/y],
  ["other", /[\s\S]/y],
];

/** [{text, cls}] tokens of Python source; cls is null for plain text. */
export function tokenize(source) {
  const tokens = [];
  let pos = 0;
  let previousName = null;
  while (pos < source.length) {
    for (const [kind, re] of RULES) {
      re.lastIndex = pos;
      const m = re.exec(source);
      if (!m || !m[0].length) continue;
      const text = m[0];
      let cls = null;
      if (kind === "name") {
        if (KEYWORDS.has(text)) cls = "kw";
        else if (previousName === "def" || previousName === "class") cls = "fn";
        else if (BUILTINS.has(text)) cls = "bi";
        previousName = text;
      } else if (kind !== "ws") {
        previousName = null;
        cls = kind === "other" ? null : kind;
      }
      tokens.push({ text, cls });
      pos += text.length;
      break;
    }
  }
  return tokens;
}

/**
 * Fill `codeEl` with highlighted `source`, one block per line (numbered by CSS). Lines from
 * `boundary` on (the model's completion) are marked, so prompt and generated code are told apart.
 */
export function highlightInto(codeEl, source, boundary = source.length) {
  codeEl.replaceChildren();
  let offset = 0;
  let lineStart = 0;
  let line = null;
  const newLine = () => {
    line = document.createElement("span");
    line.className = "line";
    codeEl.append(line);
  };
  const finishLine = (endOffset) => {
    // A line counts as completion if any of its characters are past the boundary.
    if (endOffset > boundary) line.classList.add("completion");
    if (!line.childNodes.length) line.append(document.createTextNode("\u200b"));
  };
  const put = (text, cls) => {
    if (!text) return;
    if (cls) {
      const span = document.createElement("span");
      span.className = `tok-${cls}`;
      span.textContent = text;
      line.append(span);
    } else {
      line.append(document.createTextNode(text));
    }
  };
  newLine();
  for (const token of tokenize(source)) {
    const pieces = token.text.split("\n");
    pieces.forEach((piece, i) => {
      if (i > 0) {
        finishLine(Math.max(offset, lineStart + 1));
        offset += 1; // the newline itself
        lineStart = offset;
        newLine();
      }
      put(piece, token.cls);
      offset += piece.length;
    });
  }
  finishLine(Math.max(offset, lineStart + 1));
  // A trailing newline leaves an empty last line: drop it.
  if (source.endsWith("\n") && codeEl.lastChild && codeEl.lastChild.textContent === "\u200b") codeEl.lastChild.remove();
}
