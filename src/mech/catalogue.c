/* Mechanism catalogues (catalogue.h, docs/mechanisms.md): the built-ins, whose C the build
 * generates from mechanisms/ (hb_nmodlgen), users' shared libraries, and lookup by name. */
#define _POSIX_C_SOURCE 200809L /* dlopen, stat */
#include "mech/catalogue.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/nearest_name.h"
#include "common/status.h"

/* Defined by the generated gen/catalogues/hbg_<name>_catalogue.c. */
const hb_catalogue_t *hb_catalogue_builtin_default(void);
const hb_catalogue_t *hb_catalogue_builtin_bbp(void);
const hb_catalogue_t *hb_catalogue_builtin_allen(void);

typedef const hb_catalogue_t *(*hb_catalogue_fn)(void);
static const hb_catalogue_fn builtins[] = {hb_catalogue_builtin_default, hb_catalogue_builtin_bbp,
                                           hb_catalogue_builtin_allen};
enum { N_BUILTIN = (int)(sizeof builtins / sizeof *builtins) };

int hb_catalogue_builtin_count(void)
{
    return N_BUILTIN;
}

const hb_catalogue_t *hb_catalogue_builtin(int i)
{
    return i >= 0 && i < N_BUILTIN ? builtins[i]() : NULL;
}

/* The users' catalogues loaded in this process (hb_catalogue_identity finds a mechanism's);
 * they stay loaded, so the pointers stay good. */
enum { MAX_LOADED = 256 };
static const hb_catalogue_t *loaded[MAX_LOADED];
static int n_loaded;
static pthread_mutex_t loaded_lock = PTHREAD_MUTEX_INITIALIZER;

static void remember(const hb_catalogue_t *cat)
{
    pthread_mutex_lock(&loaded_lock);
    int known = 0;
    for (int i = 0; i < n_loaded; i++) known |= loaded[i] == cat;
    if (!known && n_loaded < MAX_LOADED) loaded[n_loaded++] = cat;
    pthread_mutex_unlock(&loaded_lock);
}

/* The checks a loaded catalogue passes before anything reads it beyond its header. */
static hb_status_t check_catalogue(const char *path, const hb_catalogue_t *cat)
{
    if (!cat)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "%s: hb_catalogue_v1() returned NULL; expected a catalogue", path);
    if (cat->abi != HB_CAT_ABI)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "%s: a catalogue of ABI %u, and this hinesbatch reads ABI %u; expected the "
                       "catalogue rebuilt by this hinesbatch's build-catalogue",
                       path, cat->abi, (unsigned)HB_CAT_ABI);
    if (cat->sizeof_mech != (unsigned)sizeof(hb_cat_mech_t))
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "%s: a catalogue whose mechanisms are %u bytes, and this hinesbatch's are "
                       "%u (ABI %u both); expected the catalogue rebuilt by this hinesbatch's "
                       "build-catalogue",
                       path, cat->sizeof_mech, (unsigned)sizeof(hb_cat_mech_t),
                       (unsigned)HB_CAT_ABI);
    if (!cat->name || !cat->name[0] || strstr(cat->name, "::") || cat->n_mech < 0 ||
        (cat->n_mech > 0 && !cat->mech))
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "%s: a catalogue without a name or with a broken mechanism table; expected "
                       "one built by hinesbatch build-catalogue",
                       path);
    for (int i = 0; i < cat->n_mech; i++)
        if (!cat->mech[i].name || !cat->mech[i].cpu)
            return hb_fail(HB_ERR_INVALID_VALUE,
                           "%s: mechanism %d of the catalogue %s has no name or no CPU kernels; "
                           "expected one built by hinesbatch build-catalogue",
                           path, i, cat->name);
    return HB_SUCCESS;
}

hb_status_t hb_catalogue_load(const char *path, const hb_catalogue_t **out)
{
    if (!out) return hb_fail(HB_ERR_INVALID_VALUE, "hb_catalogue_load: out is NULL");
    *out = NULL;
    if (!path || !path[0])
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "hb_catalogue_load: no path; expected the path of a catalogue (.so)");
    struct stat st;
    if (stat(path, &st) != 0)
        return hb_fail(HB_ERR_IO,
                       "%s: no such file; expected a catalogue built by hinesbatch "
                       "build-catalogue MODDIR -o NAME.so",
                       path);
    if (!S_ISREG(st.st_mode))
        return hb_fail(HB_ERR_IO, "%s: not a file; expected a catalogue (.so)", path);
    /* dlopen searches the library path for a name without a slash: the path is a file's */
    char *local = NULL;
    const char *open_path = path;
    if (!strchr(path, '/')) {
        local = malloc(strlen(path) + 3);
        if (!local) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", path);
        strcpy(local, "./");
        strcat(local, path);
        open_path = local;
    }
    dlerror();
    void *lib = dlopen(open_path, RTLD_NOW | RTLD_LOCAL);
    free(local);
    if (!lib) {
        const char *why = dlerror();
        return hb_fail(HB_ERR_IO,
                       "%s: cannot load it as a shared library (%s); expected a catalogue built "
                       "by hinesbatch build-catalogue",
                       path, why ? why : "dlopen failed");
    }
    hb_catalogue_fn get;
    void *sym = dlsym(lib, "hb_catalogue_v1");
    memcpy(&get, &sym, sizeof get); /* a data pointer to a function pointer (POSIX) */
    if (!sym) {
        dlclose(lib);
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "%s: not a hinesbatch catalogue (no function hb_catalogue_v1); expected a "
                       "shared library built by hinesbatch build-catalogue",
                       path);
    }
    const hb_catalogue_t *cat = get();
    const hb_status_t status = check_catalogue(path, cat);
    if (status != HB_SUCCESS) {
        dlclose(lib);
        return status;
    }
    *out = cat; /* lib stays loaded: the catalogue's tables and kernels live in it */
    remember(cat);
    return HB_SUCCESS;
}

int hb_catalogue_loaded_count(void)
{
    pthread_mutex_lock(&loaded_lock);
    const int n = n_loaded;
    pthread_mutex_unlock(&loaded_lock);
    return n;
}

const hb_catalogue_t *hb_catalogue_loaded(int i)
{
    pthread_mutex_lock(&loaded_lock);
    const hb_catalogue_t *cat = i >= 0 && i < n_loaded ? loaded[i] : NULL;
    pthread_mutex_unlock(&loaded_lock);
    return cat;
}

uint64_t hb_catalogue_identity(const hb_cat_mech_t *mech)
{
    const hb_catalogue_t *found = NULL;
    for (int i = 0; i < N_BUILTIN && !found; i++) {
        const hb_catalogue_t *b = hb_catalogue_builtin(i);
        if (b && mech >= b->mech && mech < b->mech + b->n_mech) found = b;
    }
    pthread_mutex_lock(&loaded_lock);
    for (int i = 0; i < n_loaded && !found; i++)
        if (mech >= loaded[i]->mech && mech < loaded[i]->mech + loaded[i]->n_mech) found = loaded[i];
    pthread_mutex_unlock(&loaded_lock);
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a 64 */
    const char *parts[3] = {found ? found->name : "", found && found->generator ? found->generator : "",
                            mech->name};
    for (int k = 0; k < 3; k++)
        for (const char *c = parts[k];; c++) {
            h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
            if (!*c) break;
        }
    return h;
}

/* The catalogues searched: the built-ins, then the n_extra given. */
static const hb_catalogue_t *catalogue_at(const hb_catalogue_t *const *extra, int i)
{
    return i < N_BUILTIN ? hb_catalogue_builtin(i) : extra[i - N_BUILTIN];
}

static const hb_cat_mech_t *mech_in(const hb_catalogue_t *cat, const char *name, size_t len)
{
    for (int i = 0; i < cat->n_mech; i++)
        if (strlen(cat->mech[i].name) == len && strncmp(cat->mech[i].name, name, len) == 0)
            return &cat->mech[i];
    return NULL;
}

/* "bbp, allen" into buf: the catalogues that have `name`, or every catalogue (name NULL). */
static void list_catalogues(const hb_catalogue_t *const *extra, int n, const char *name,
                            const char *qualify, char *buf, size_t room)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < n && used < room; i++) {
        const hb_catalogue_t *cat = catalogue_at(extra, i);
        if (name && !mech_in(cat, name, strlen(name))) continue;
        const int wrote = snprintf(buf + used, room - used, "%s%s%s%s", used ? ", " : "", cat->name,
                                   qualify ? "::" : "", qualify ? qualify : "");
        if (wrote < 0) break;
        used += (size_t)wrote;
    }
}

/* The nearest mechanism name ("did you mean") among the catalogues [first, last). */
static const char *nearest_mech(const hb_catalogue_t *const *extra, int first, int last,
                                const char *name)
{
    int total = 0;
    for (int i = first; i < last; i++) total += catalogue_at(extra, i)->n_mech;
    const char **names = malloc(sizeof *names * (size_t)(total + 1));
    if (!names) return NULL;
    int n = 0;
    for (int i = first; i < last; i++) {
        const hb_catalogue_t *cat = catalogue_at(extra, i);
        for (int j = 0; j < cat->n_mech; j++) names[n++] = cat->mech[j].name;
    }
    names[n] = NULL;
    const char *best = hb_nearest_name(name, names);
    free(names);
    return best;
}

hb_status_t hb_catalogue_find(const hb_catalogue_t *const *extra, int n_extra, const char *name,
                              const hb_cat_mech_t **out)
{
    if (!out) return hb_fail(HB_ERR_INVALID_VALUE, "hb_catalogue_find: out is NULL");
    *out = NULL;
    if (!name || n_extra < 0 || (n_extra > 0 && !extra))
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_catalogue_find: name or catalogues NULL");
    for (int i = 0; i < n_extra; i++)
        if (!extra[i] || !extra[i]->name)
            return hb_fail(HB_ERR_INVALID_VALUE, "hb_catalogue_find: catalogue %d is NULL", i);
    const int n = N_BUILTIN + n_extra;
    char list[1024];
    const char *colons = strstr(name, "::");
    if (colons) { /* "bbp::Ca_HVA": that catalogue's (the first of the name) */
        const size_t cat_len = (size_t)(colons - name);
        const char *mech = colons + 2;
        for (int i = 0; i < n; i++) {
            const hb_catalogue_t *cat = catalogue_at(extra, i);
            if (strlen(cat->name) != cat_len || strncmp(cat->name, name, cat_len) != 0) continue;
            *out = mech_in(cat, mech, strlen(mech));
            if (*out) return HB_SUCCESS;
            const char *near = nearest_mech(extra, i, i + 1, mech);
            return hb_fail(HB_ERR_INVALID_VALUE,
                           "unknown mechanism \"%s\": the catalogue %s has no %s; %s%s%s", name,
                           cat->name, mech, near ? "did you mean \"" : "expected one of its ",
                           near ? near
                                : "mechanisms (hinesbatch build-catalogue --check lists them)",
                           near ? "\"?" : "");
        }
        list_catalogues(extra, n, NULL, NULL, list, sizeof list);
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "unknown mechanism \"%s\": no catalogue is named %.*s; expected one of %s",
                       name, (int)cat_len, name, list);
    }
    int found = 0;
    for (int i = 0; i < n; i++) {
        const hb_cat_mech_t *m = mech_in(catalogue_at(extra, i), name, strlen(name));
        if (m && !found++) *out = m;
    }
    if (found == 1) return HB_SUCCESS;
    *out = NULL;
    if (found > 1) {
        list_catalogues(extra, n, name, NULL, list, sizeof list);
        char qualified[1024];
        list_catalogues(extra, n, name, name, qualified, sizeof qualified);
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "ambiguous mechanism \"%s\": the catalogues %s each have one; expected it "
                       "named with its catalogue: %s",
                       name, list, qualified);
    }
    const char *near = nearest_mech(extra, 0, n, name);
    list_catalogues(extra, n, NULL, NULL, list, sizeof list);
    if (near)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "unknown mechanism \"%s\"; did you mean \"%s\"? (catalogues: %s)", name,
                       near, list);
    return hb_fail(HB_ERR_INVALID_VALUE,
                   "unknown mechanism \"%s\"; expected a mechanism of the catalogues %s "
                   "(hinesbatch build-catalogue --check lists them)",
                   name, list);
}

hb_status_t hb_catalogue_find_loaded(const char *name, const hb_cat_mech_t **out)
{
    const hb_catalogue_t *extra[MAX_LOADED];
    pthread_mutex_lock(&loaded_lock);
    const int n = n_loaded;
    memcpy(extra, loaded, (size_t)n * sizeof *extra);
    pthread_mutex_unlock(&loaded_lock);
    return hb_catalogue_find(extra, n, name, out);
}

hb_status_t hb_catalogue_open(const char *path, const char **name)
{
    hb_clear_error();
    if (name) *name = NULL;
    const hb_catalogue_t *cat = NULL;
    const hb_status_t status = hb_catalogue_load(path, &cat);
    if (status == HB_SUCCESS && name) *name = cat->name;
    return status;
}
