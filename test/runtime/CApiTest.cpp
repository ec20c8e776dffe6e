//===- CApiTest.cpp - The C API -------------------------------------------===//

#include "TestUtil.h"
#include "kiln/runtime_c.h"

#include <cstring>
#include <thread>

using namespace kiln::test;

extern "C" int kiln_c_smoke(const void *Bundle, size_t BundleSize,
                            char *Message, size_t Size);

namespace {

TEST(CApi, FromC) {
  std::string Bytes = buildBundle({{vaddKernel()}});
  char Message[512];
  EXPECT_TRUE(kiln_c_smoke(Bytes.data(), Bytes.size(), Message,
                           sizeof(Message)))
      << Message;
}

class CApiTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(kiln_device_open(nullptr, &Dev), KILN_SUCCESS);
    ASSERT_EQ(kiln_stream_create(Dev, &Stream), KILN_SUCCESS);
    std::string Bytes = buildBundle({{vaddKernel(), printerKernel(),
                                      trapperKernel()}});
    ASSERT_EQ(kiln_module_load_memory(Dev, Bytes.data(), Bytes.size(), &Mod),
              KILN_SUCCESS)
        << kiln_last_error();
  }
  void TearDown() override {
    kiln_module_unload(Mod);
    kiln_stream_destroy(Stream);
    kiln_device_close(Dev);
  }
  kiln_device *Dev = nullptr;
  kiln_stream *Stream = nullptr;
  kiln_module *Mod = nullptr;
};

TEST_F(CApiTest, Introspection) {
  EXPECT_STREQ(kiln_device_name(Dev), "host");
  EXPECT_EQ(std::strncmp(kiln_device_description(Dev), "host (", 6), 0);
  ASSERT_EQ(kiln_module_kernel_count(Mod), 3u);
  EXPECT_STREQ(kiln_module_kernel_name(Mod, 1), "printer");
  EXPECT_EQ(kiln_module_kernel_name(Mod, 3), nullptr);
  kiln_kernel *K = nullptr;
  ASSERT_EQ(kiln_module_get_kernel(Mod, "vadd", &K), KILN_SUCCESS);
  kiln_kernel *Again = nullptr;
  ASSERT_EQ(kiln_module_get_kernel(Mod, "vadd", &Again), KILN_SUCCESS);
  EXPECT_EQ(K, Again);
  ASSERT_EQ(kiln_kernel_param_count(K), 4u);
  kiln_param_info P;
  ASSERT_EQ(kiln_kernel_param(K, 0, &P), KILN_SUCCESS);
  EXPECT_STREQ(P.name, "x");
  EXPECT_EQ(P.is_pointer, 1);
  EXPECT_EQ(P.type, KILN_TYPE_F32);
  EXPECT_EQ(P.align, 16);
  EXPECT_EQ(kiln_kernel_param(K, 4, &P), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_kernel_param: index out of range");
  ASSERT_EQ(kiln_kernel_variant_count(K), 3u);
  EXPECT_STREQ(kiln_kernel_variant_name(K, 2), "vadd_v2");
  EXPECT_STREQ(kiln_kernel_variant_config(K, 2), "BLOCK=16, warps=4, stages=2");
  EXPECT_EQ(kiln_kernel_variant_name(K, 3), nullptr);
}

TEST_F(CApiTest, Errors) {
  kiln_kernel *K = nullptr;
  EXPECT_EQ(kiln_module_get_kernel(Mod, "vad", &K), KILN_ERROR_NOT_FOUND);
  EXPECT_STREQ(kiln_last_error(),
               "bundle '<memory>' has no kernel 'vad'; did you mean 'vadd'? "
               "(kernels: vadd, printer, trapper)");
  EXPECT_STREQ(kiln_status_name(KILN_ERROR_NOT_FOUND), "KILN_ERROR_NOT_FOUND");
  // The message is per thread.
  std::string Other = "unset";
  std::thread([&] { Other = kiln_last_error(); }).join();
  EXPECT_EQ(Other, "");

  ASSERT_EQ(kiln_module_get_kernel(Mod, "vadd", &K), KILN_SUCCESS);
  kiln_arg Args[4] = {kiln_arg_pointer(nullptr, KILN_TYPE_ANY),
                      kiln_arg_pointer(nullptr, KILN_TYPE_ANY),
                      kiln_arg_pointer(nullptr, KILN_TYPE_ANY),
                      kiln_arg_f32(1.0f)};
  EXPECT_EQ(kiln_kernel_plan(K, Args, 4, nullptr, nullptr),
            KILN_ERROR_LAUNCH_REFUSED);
  EXPECT_STREQ(kiln_last_error(),
               "argument 3 ('n') of vadd expects i32, got f32");
  EXPECT_EQ(kiln_kernel_plan(K, Args, 2, nullptr, nullptr),
            KILN_ERROR_LAUNCH_REFUSED);
  Args[3] = kiln_arg_i32(64);
  kiln_launch_options Options = {"BLOCK=", -1};
  EXPECT_EQ(kiln_kernel_plan(K, Args, 4, &Options, nullptr),
            KILN_ERROR_INVALID_ARGUMENT);
  Options = {nullptr, 9};
  EXPECT_EQ(kiln_kernel_plan(K, Args, 4, &Options, nullptr),
            KILN_ERROR_NOT_FOUND);
  Options = {"BLOCK=16", -1};
  kiln_launch_info Info;
  ASSERT_EQ(kiln_kernel_plan(K, Args, 4, &Options, &Info), KILN_SUCCESS);
  EXPECT_EQ(Info.variant, 2u);
  EXPECT_EQ(Info.grid[0], 4);
  Args[3].type = 99;
  EXPECT_EQ(kiln_kernel_plan(K, Args, 4, nullptr, nullptr),
            KILN_ERROR_INVALID_ARGUMENT);

  EXPECT_EQ(kiln_launch(nullptr, Stream, Args, 4, nullptr, nullptr),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_module_get_kernel(nullptr, "vadd", &K),
            KILN_ERROR_INVALID_ARGUMENT);
  kiln_device *Cuda = nullptr;
  // The tests run without a CUDA driver (CudaTest.cpp).
  EXPECT_EQ(kiln_device_open("cuda:1", &Cuda), KILN_ERROR_DRIVER);
  EXPECT_EQ(Cuda, nullptr);
  kiln_module *Bad = nullptr;
  EXPECT_EQ(kiln_module_load_memory(Dev, "junk", 4, &Bad),
            KILN_ERROR_INVALID_BUNDLE);
  EXPECT_EQ(kiln_module_load_file(Dev, "/nonexistent.kpack", &Bad),
            KILN_ERROR_IO);
  EXPECT_STREQ(kiln_last_error(),
               "cannot read '/nonexistent.kpack': No such file or directory");
  kiln_buffer *Buf = nullptr;
  ASSERT_EQ(kiln_buffer_alloc(Dev, 8, &Buf), KILN_SUCCESS);
  EXPECT_EQ(kiln_fill(Stream, Buf, 4, 0, 8), KILN_ERROR_INVALID_ARGUMENT);
  kiln_buffer_free(Buf);
}

void collect(void *User, const char *Line) {
  static_cast<std::vector<std::string> *>(User)->push_back(Line);
}

TEST_F(CApiTest, PrintTrapAndEvents) {
  std::vector<std::string> Lines;
  ASSERT_EQ(kiln_device_set_print_callback(Dev, collect, &Lines),
            KILN_SUCCESS);
  kiln_kernel *Printer = nullptr;
  ASSERT_EQ(kiln_module_get_kernel(Mod, "printer", &Printer), KILN_SUCCESS);
  float X = 2.0f;
  kiln_arg Args[2] = {kiln_arg_pointer(&X, KILN_TYPE_F32), kiln_arg_i32(1)};
  kiln_event *Start = nullptr, *End = nullptr;
  ASSERT_EQ(kiln_event_create(Dev, &Start), KILN_SUCCESS);
  ASSERT_EQ(kiln_event_create(Dev, &End), KILN_SUCCESS);
  double Ms = -1;
  EXPECT_EQ(kiln_event_elapsed_ms(Start, End, &Ms),
            KILN_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(kiln_event_record(Start, Stream), KILN_SUCCESS);
  ASSERT_EQ(kiln_launch(Printer, Stream, Args, 2, nullptr, nullptr),
            KILN_SUCCESS)
      << kiln_last_error();
  ASSERT_EQ(kiln_event_record(End, Stream), KILN_SUCCESS);
  ASSERT_EQ(kiln_event_synchronize(End), KILN_SUCCESS);
  ASSERT_EQ(kiln_event_elapsed_ms(Start, End, &Ms), KILN_SUCCESS);
  EXPECT_GE(Ms, 0.0);
  ASSERT_EQ(Lines.size(), 5u);
  EXPECT_EQ(Lines[0], "x = 2");
  kiln_event_destroy(Start);
  kiln_event_destroy(End);

  kiln_kernel *Trapper = nullptr;
  ASSERT_EQ(kiln_module_get_kernel(Mod, "trapper", &Trapper), KILN_SUCCESS);
  int64_t Done = 0;
  kiln_arg TrapArgs[3] = {kiln_arg_i32(0), kiln_arg_pointer(&Done, KILN_TYPE_I64),
                          kiln_arg_i32(4)};
  EXPECT_EQ(kiln_launch(Trapper, Stream, TrapArgs, 3, nullptr, nullptr),
            KILN_ERROR_KERNEL_TRAPPED);
  EXPECT_STREQ(kiln_last_error(), "kernel trapped: k.tile:3:5: assertion "
                                  "failed: boom (in program 0, 0, 0)");
  ASSERT_EQ(kiln_device_set_print_callback(Dev, nullptr, nullptr),
            KILN_SUCCESS);
}

TEST(CApi, HandlesInAnyOrder) {
  kiln_device *Dev = nullptr;
  ASSERT_EQ(kiln_device_open("host", &Dev), KILN_SUCCESS);
  kiln_buffer *Buf = nullptr;
  kiln_stream *S = nullptr;
  ASSERT_EQ(kiln_buffer_alloc(Dev, 64, &Buf), KILN_SUCCESS);
  ASSERT_EQ(kiln_stream_create(Dev, &S), KILN_SUCCESS);
  kiln_device_close(Dev); // the buffer and stream keep it alive
  EXPECT_EQ(kiln_fill(S, Buf, 0, 7, 64), KILN_SUCCESS);
  EXPECT_EQ(static_cast<unsigned char *>(kiln_buffer_pointer(Buf))[63], 7);
  EXPECT_EQ(kiln_buffer_size(Buf), 64u);
  kiln_stream_destroy(S);
  kiln_buffer_free(Buf);
  kiln_buffer_free(nullptr);
}

} // namespace
