// Renders markdown from standard input to HTML on standard output with
// markdown-it: by default in its strict CommonMark preset (what a reader of
// a document sees, whatever its source hides: a fence's info string, a
// comment); with --gfm as GitHub shows a pull request comment (tables,
// strikethrough, autolinks, and raw HTML passed through, so that a test
// sees any tag a comment's text would inject).
import MarkdownIt from "markdown-it";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const md = process.argv.includes("--gfm")
  ? new MarkdownIt("default", { html: true, linkify: true })
  : new MarkdownIt("commonmark");
process.stdout.write(md.render(Buffer.concat(chunks).toString("utf8")));
