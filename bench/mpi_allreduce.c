/* xal-mpi-allreduce: the baseline of `xal-bench coll`. Times MPI_Allreduce
 * over the processes of MPI_COMM_WORLD for a range of sizes and prints
 * "xal-mpi BYTES TIME_US" per size from rank 0.
 *
 *   mpirun -np 4 xal-mpi-allreduce DTYPE OP MIN_BYTES MAX_BYTES FACTOR ITERS WARMUP
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MPI_Datatype dtype_of(const char* s, size_t* size) {
  struct { const char* name; MPI_Datatype t; size_t size; } map[] = {
      {"i8", MPI_INT8_T, 1},   {"u8", MPI_UINT8_T, 1},   {"i32", MPI_INT32_T, 4},
      {"u32", MPI_UINT32_T, 4}, {"i64", MPI_INT64_T, 8}, {"u64", MPI_UINT64_T, 8},
      {"f32", MPI_FLOAT, 4},   {"f64", MPI_DOUBLE, 8}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; ++i)
    if (strcmp(s, map[i].name) == 0) {
      *size = map[i].size;
      return map[i].t;
    }
  *size = 4; /* halves have no MPI type: time f32 of the same bytes */
  return MPI_FLOAT;
}

static MPI_Op op_of(const char* s) {
  if (strcmp(s, "prod") == 0) return MPI_PROD;
  if (strcmp(s, "min") == 0) return MPI_MIN;
  if (strcmp(s, "max") == 0) return MPI_MAX;
  return MPI_SUM; /* sum, and avg (a sum then a scale) */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 8) {
    if (rank == 0)
      fprintf(stderr, "usage: xal-mpi-allreduce DTYPE OP MIN_BYTES MAX_BYTES FACTOR ITERS WARMUP\n");
    MPI_Finalize();
    return 2;
  }
  size_t es = 4;
  const MPI_Datatype type = dtype_of(argv[1], &es);
  const MPI_Op op = op_of(argv[2]);
  const double lo = atof(argv[3]), hi = atof(argv[4]), factor = atof(argv[5]);
  const int iters = atoi(argv[6]), warmup = atoi(argv[7]);
  if (!(lo >= 1 && hi >= lo && factor > 1 && iters > 0 && warmup >= 0)) {
    if (rank == 0) fprintf(stderr, "xal-mpi-allreduce: bad arguments\n");
    MPI_Finalize();
    return 2;
  }
  char* send = calloc((size_t)hi + es, 1);
  char* recv = calloc((size_t)hi + es, 1);
  if (!send || !recv) MPI_Abort(MPI_COMM_WORLD, 1);
  for (double size = lo; size <= hi * 1.0001; size *= factor) {
    int count = (int)((size_t)size / es);
    if (count < 1) count = 1;
    for (int i = 0; i < warmup; ++i) MPI_Allreduce(send, recv, count, type, op, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) MPI_Allreduce(send, recv, count, type, op, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t = (MPI_Wtime() - t0) / iters;
    if (rank == 0) printf("xal-mpi %zu %.3f\n", (size_t)count * es, t * 1e6);
    fflush(stdout);
  }
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
