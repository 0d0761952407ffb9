/* placeholder: being written */
typedef int hprof_placeholder_options;
