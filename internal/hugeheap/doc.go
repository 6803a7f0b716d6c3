// Package hugeheap asks Linux to back the first part of the Go heap with
// transparent huge pages where the kernel gives them only to memory that
// asks for them (transparent_hugepage/enabled set to "madvise", the
// default of Ubuntu, Debian and this project's CI machines).
//
// A review or a render touches a few hundred megabytes of fresh heap, and
// with 4 KiB pages the kernel takes one fault for each: about 50,000 in a
// one-sector review of the 2,200-cluster benchmark fleet, a sixth of its
// CPU (perf). The Go runtime advises huge pages for its own metadata only
// and leaves the heap's pages to the kernel's default, so Advise has the
// runtime map the heap's next addresses by taking blocks of them, advises
// the blocks MADV_HUGEPAGE, and gives them back: the heap then grows into
// memory the kernel backs with 2 MiB pages, a fault for each. The runtime
// zeroes each span it hands out from there again (the blocks were handed
// out once), which is where the kernel's zeroing of a 2 MiB page lands.
//
// Advise runs once, while the program starts (package atstart), so that
// the heap its packages' initialisation allocates is advised too, for
// every command; it imports only what the runtime initialises first.
package hugeheap
