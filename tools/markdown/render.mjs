// Renders CommonMark from standard input to HTML on standard output, with
// markdown-it in its strict CommonMark preset: what a reader of a document
// sees, whatever its source hides (a fence's info string, a comment).
import MarkdownIt from "markdown-it";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const md = new MarkdownIt("commonmark");
process.stdout.write(md.render(Buffer.concat(chunks).toString("utf8")));
