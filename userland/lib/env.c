/* The env object of bench and fuzz records (docs/console.md). */
#include <apps.h>
#include <root.h>

void bench_env_json(char *buf, unsigned long size)
{
    char accel[16] = "unknown";
    arg_str("accel", accel, sizeof(accel));
    bool icount = arg_word("icount", 0) != 0;
    snprintf(buf, size,
             "{\"arch\": \"%s\", \"lock\": \"%s\", \"cpus\": %lu, \"accel\": \"%s\", "
             "\"icount\": %s, \"git\": \"%s\"}",
             bootinfo->arch, bootinfo->lock, (unsigned long)bootinfo->ncores, accel,
             icount ? "true" : "false", GIT_REV);
}
