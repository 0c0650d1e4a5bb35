/* The programs the root task can run (app= on the command line).  Each returns the run's status. */
#ifndef APPS_H
#define APPS_H

int app_hello(void);
int app_tests(void);
int app_fuzz(void);
int app_pingpong(void);
int app_mcpingpong(void);
int app_redis(void);        /* userland/redis/redis_app.c, or roottask/network_absent.c without lwIP */
int app_posix(void);        /* userland/roottask/posix_app.c */

/* The env object of bench and fuzz records (docs/console.md), into buf. */
void bench_env_json(char *buf, unsigned long size);

#endif
