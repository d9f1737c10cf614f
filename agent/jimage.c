/* jimage.c - see jimage.h. */
#include "jimage.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libjimage's entry points (the JDK's src/java.base/share/native/
 * libjimage/jimage.hpp): a location is a jlong, 0 when not found. */
typedef void *(*jimage_open_fn)(const char *path, int32_t *error);
typedef void (*jimage_close_fn)(void *image);
typedef const char *(*jimage_package_fn)(void *image, const char *package);
typedef int64_t (*jimage_find_fn)(void *image, const char *module, const char *version, const char *name,
				  int64_t *size);
typedef int64_t (*jimage_get_fn)(void *image, int64_t location, char *buf, int64_t size);

struct jimage {
	void *lib;     /* dlopen handle, owned */
	void *image;   /* JIMAGE_Open's, owned */
	jimage_close_fn close;
	jimage_package_fn package;
	jimage_find_fn find;
	jimage_get_fn get;
};

/* dlsym's void * to a function pointer, the way POSIX allows it. */
static int sym(void *lib, const char *name, void *fn, size_t fn_size)
{
	void *p = dlsym(lib, name);
	if (!p || fn_size != sizeof(p))
		return -ENOENT;
	memcpy(fn, &p, sizeof(p));
	return 0;
}

int jimage_open(const char *java_home, struct jimage **out)
{
	*out = NULL;
	struct jimage *j = calloc(1, sizeof(*j));
	size_t hl = strlen(java_home);
	char *path = malloc(hl + 32);
	int rc = -ENOMEM;
	if (!j || !path)
		goto fail;
	rc = -ENOENT;
	snprintf(path, hl + 32, "%s/lib/libjimage.so", java_home);
	if (!(j->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
		goto fail;
	jimage_open_fn open_image;
	if (sym(j->lib, "JIMAGE_Open", &open_image, sizeof(open_image)) ||
	    sym(j->lib, "JIMAGE_Close", &j->close, sizeof(j->close)) ||
	    sym(j->lib, "JIMAGE_PackageToModule", &j->package, sizeof(j->package)) ||
	    sym(j->lib, "JIMAGE_FindResource", &j->find, sizeof(j->find)) ||
	    sym(j->lib, "JIMAGE_GetResource", &j->get, sizeof(j->get)))
		goto fail;
	snprintf(path, hl + 32, "%s/lib/modules", java_home);
	int32_t error = 0;
	if (!(j->image = open_image(path, &error)))
		goto fail;
	free(path);
	*out = j;
	return 0;
fail:
	free(path);
	jimage_close(j);
	return rc;
}

int jimage_read_class(struct jimage *j, const char *name, uint8_t **data, size_t *len)
{
	*data = NULL;
	*len = 0;
	const char *slash = strrchr(name, '/');
	size_t nl = strlen(name), pl = slash ? (size_t)(slash - name) : 0;
	char *pkg = malloc(pl + 1), *res = malloc(nl + 8);
	int rc = -ENOMEM;
	if (!pkg || !res)
		goto out;
	memcpy(pkg, name, pl);
	pkg[pl] = 0;
	snprintf(res, nl + 8, "%s.class", name);
	rc = -ENOENT;
	const char *module = j->package(j->image, pkg);
	int64_t size = 0;
	/* the version argument names a versioned layout no image has used
	 * (HotSpot passes its own); the lookup is by module and name */
	int64_t loc = module ? j->find(j->image, module, "9.0", res, &size) : 0;
	if (!loc || size <= 0)
		goto out;
	rc = -ENOMEM;
	if (!(*data = malloc((size_t)size)))
		goto out;
	rc = -EIO;
	if (j->get(j->image, loc, (char *)*data, size) != size) {
		free(*data);
		*data = NULL;
		goto out;
	}
	*len = (size_t)size;
	rc = 0;
out:
	free(pkg);
	free(res);
	return rc;
}

void jimage_close(struct jimage *j)
{
	if (!j)
		return;
	if (j->image && j->close)
		j->close(j->image);
	if (j->lib)
		dlclose(j->lib);
	free(j);
}
