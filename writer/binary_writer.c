/* placeholder: being written */
typedef int hprof_placeholder_binary_writer;
