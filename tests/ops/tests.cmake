# ops.<case>: every golden op test directory tests/golden/ops/<case>/ (model.onnx and
# test_data_set_*, written by the committed generators beside them) run by tconv-run at its
# default tolerances (rtol 1e-4, atol 1e-5).
file(GLOB tconv_op_models CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/tests/golden/ops/*/model.onnx")
foreach(model ${tconv_op_models})
  get_filename_component(case_dir "${model}" DIRECTORY)
  get_filename_component(case "${case_dir}" NAME)
  add_test(NAME "ops.${case}" COMMAND tconv-run "${case_dir}")
  set_tests_properties("ops.${case}" PROPERTIES TIMEOUT 300 LABELS golden_ops)
endforeach()
