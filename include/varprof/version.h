/* The library's version string. */
#ifndef VARPROF_VERSION_H
#define VARPROF_VERSION_H
#define VP_VERSION "0.1.0"
#endif
