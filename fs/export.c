/* export.c - see export.h. */
#include "export.h"

#include <stdio.h>
#include <string.h>

int export_cli_main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			puts("usage: heapfs export TRACE... -o DIR [--gcs A-B] [-q]");
			return 0;
		}
	fprintf(stderr, "heapfs export: not implemented yet\n");
	return 1;
}
